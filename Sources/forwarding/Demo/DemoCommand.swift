/// The parts of the demo, in the order they run.
enum DemoPart: String, CaseIterable {
    case all, runtime, lifecycle, forwarding, hooks, throttle, runloop
}

/// `forwarding demo`: classes, sends, +initialize and dealloc, forwarding, hooks, throttling and
/// run loops, narrated, with a summary of what each section showed.
struct DemoCommand: Subcommand {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "Show classes and sends, +initialize and dealloc, forwarding, hooks, throttling and run loops.",
        discussion: """
            Each section prints what it sends and what comes back; the throttle section draws one
            timeline per mode, in virtual time. A summary of every section ends the output.
            """,
        options: [
            OptionSpec(name: "part", value: "part", help: "Which part to show.",
                       choices: DemoPart.allCases.map(\.rawValue), defaultValue: "all"),
            OptionSpec(name: "mode", value: "modes",
                       help: "Throttle timelines to draw, comma-separated, of "
                           + ThrottleDemo.modes.map(\.name).joined(separator: ", ")
                           + "; without --part, only the throttle part runs.",
                       defaultValue: "all"),
        ])

    let parts: [DemoPart]
    let modes: [ThrottleDemo.Mode]

    init(_ options: ParsedOptions) throws {
        let modeFilter = options.string("mode")
        var part = options.choice("part", default: DemoPart.all)
        if options.string("part") == nil, modeFilter != nil { part = .throttle }
        parts = part == .all ? DemoPart.allCases.filter { $0 != .all } : [part]
        guard let modeFilter else {
            modes = ThrottleDemo.modes
            return
        }
        var chosen: [ThrottleDemo.Mode] = []
        for term in modeFilter.split(separator: ",").map({ String($0).trimmed() }) {
            guard let mode = ThrottleDemo.modes.first(where: { $0.name == term }) else {
                throw UsageError(command: Self.spec, message: "unknown mode '\(term)' for '--mode'; use "
                    + ThrottleDemo.modes.map(\.name).joined(separator: ", "))
            }
            chosen.append(mode)
        }
        modes = chosen
    }

    func run() throws -> Int32 {
        var summary: [(DemoPart, String)] = []
        for part in parts {
            switch part {
            case .all: continue
            case .runtime: summary.append((part, try DemoSections.runtime()))
            case .lifecycle: summary.append((part, try DemoSections.lifecycle()))
            case .forwarding: summary.append((part, try DemoSections.forwarding()))
            case .hooks: summary.append((part, try DemoSections.hooks()))
            case .throttle: summary.append((part, try ThrottleDemo.run(modes)))
            case .runloop: summary.append((part, try RunLoopDemo.run()))
            }
        }
        DemoSections.heading("summary")
        for (part, text) in summary {
            print(wrapped(part.rawValue, text))
        }
        return 0
    }

    /// `label` padded, then `text` wrapped at 96 columns under itself.
    private func wrapped(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: 11)
        var lines: [String] = []
        var line = label.padded(11)
        var lineHasWords = false
        for word in text.split(separator: " ") {
            if lineHasWords, line.count + 1 + word.count > 96 {
                lines.append(line)
                line = indent
                lineHasWords = false
            }
            line += (lineHasWords ? " " : "") + word
            lineHasWords = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
