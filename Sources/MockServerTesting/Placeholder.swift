import MockServer
