import Gateway
import Glibc

exit(Gateway.main(Array(CommandLine.arguments.dropFirst())))
