import Glibc

/// A subcommand of `forwarding`: its options, and a run that returns the exit status.
protocol Subcommand: Sendable {
    static var spec: CommandSpec { get }
    init(_ options: ParsedOptions) throws
    func run() throws -> Int32
}

/// A subcommand as the dispatcher sees it: its spec, and how to build and run it.
struct SubcommandEntry: Sendable {
    let spec: CommandSpec
    let execute: @Sendable (ParsedOptions) throws -> Int32

    init<C: Subcommand>(_ command: C.Type) {
        spec = C.spec
        execute = { try C($0).run() }
    }
}

/// The `forwarding` command: demonstrations and benchmarks of the runtime. Its arguments are
/// parsed here rather than with a parsing library, so that the package depends on nothing.
@main
enum Forwarding {
    static let program = "forwarding"
    static let subcommands = [SubcommandEntry(DemoCommand.self), SubcommandEntry(BenchCommand.self)]

    static func main() {
        do {
            exit(try run(CommandLine.arguments.dropFirst()))
        } catch let error as UsageError {
            let help = error.command.map { "\(program) \($0.name) --help" } ?? "\(program) --help"
            FileHandleStderr.write("error: \(error.message)\nSee '\(help)'.\n")
            exit(64)
        } catch {
            FileHandleStderr.write("error: \(error)\n")
            exit(1)
        }
    }

    static func run(_ arguments: ArraySlice<String>) throws -> Int32 {
        switch arguments.first {
        case "--version":
            print(PackageVersion.current)
            return 0
        case "-h", "--help", "help":
            let named = arguments.dropFirst().first.flatMap { n in subcommands.first { $0.spec.name == n } }
            print(named.map { $0.spec.help(program: program) } ?? help())
            return 0
        default:
            break
        }
        // No subcommand name: the arguments are the demo's (`demo` is the default).
        var rest = arguments
        var command = subcommands[0]
        if let first = rest.first, !first.hasPrefix("-") {
            guard let named = subcommands.first(where: { $0.spec.name == first }) else {
                throw UsageError(command: nil, message: "unknown subcommand '\(first)'; use "
                    + subcommands.map(\.spec.name).joined(separator: " or "))
            }
            command = named
            rest = rest.dropFirst()
        }
        let options = try command.spec.parse(rest)
        if options.helpRequested {
            print(command.spec.help(program: program))
            return 0
        }
        return try command.execute(options)
    }

    static func help() -> String {
        var lines = [
            "OVERVIEW: Objective-C-style dynamic dispatch, forwarding and message throttling on libffi.",
            "",
            "USAGE: \(program) <subcommand> [<options>]",
            "",
            "OPTIONS:",
            "  --version   Show the version.",
            "  --help      Show help information.",
            "",
            "SUBCOMMANDS:",
        ]
        for (i, command) in subcommands.enumerated() {
            let name = command.spec.name + (i == 0 ? " (default)" : "")
            lines.append("  " + name.padded(16) + command.spec.abstract)
        }
        lines += ["", "  See '\(program) help <subcommand>' or '\(program) <subcommand> --help' for details."]
        return lines.joined(separator: "\n")
    }
}
