import Foundation
import MockServer

exit(MockServerMain.run(arguments: Array(CommandLine.arguments.dropFirst())))
