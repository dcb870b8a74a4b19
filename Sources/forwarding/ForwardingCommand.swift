import ArgumentParser

/// The `forwarding` command: demonstrations and benchmarks of the runtime.
@main
struct Forwarding: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forwarding",
        abstract: "Objective-C-style dynamic dispatch, forwarding and message throttling on libffi.",
        subcommands: [Demo.self, Bench.self],
        defaultSubcommand: Demo.self
    )
}
