import Foundation
import MockServerCLI

exit(MockServerMain.run(arguments: Array(CommandLine.arguments.dropFirst())))
