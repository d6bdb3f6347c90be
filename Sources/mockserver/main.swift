import MockServer
print("mockserver \(MockServerInfo.version)")
