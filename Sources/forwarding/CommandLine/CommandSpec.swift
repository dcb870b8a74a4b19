/// One option of a subcommand: `--name VALUE`, or a flag (`value == nil`).
struct OptionSpec {
    let name: String
    /// The value's placeholder in the help ("N", "FILE"), or nil for a flag.
    var value: String? = nil
    let help: String
    /// The accepted values, when the option takes one of a fixed list.
    var choices: [String]? = nil
    /// The default shown in the help.
    var defaultValue: String? = nil
}

/// A subcommand's options, its help text, and the parser for its arguments.
struct CommandSpec {
    let name: String
    let abstract: String
    var discussion: String = ""
    let options: [OptionSpec]

    /// Parses `--name VALUE`, `--name=VALUE` and flags; anything else is a `UsageError`.
    func parse(_ arguments: ArraySlice<String>) throws -> ParsedOptions {
        var parsed = ParsedOptions()
        var rest = arguments
        while let argument = rest.popFirst() {
            if argument == "-h" || argument == "--help" {
                parsed.helpRequested = true
                continue
            }
            guard argument.hasPrefix("--") else {
                throw UsageError(command: self, message: "unexpected argument '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError(command: self, message: "unknown option '--\(name)'")
            }
            guard spec.value != nil else {
                if inlineValue != nil { throw UsageError(command: self, message: "'--\(name)' takes no value") }
                parsed.flags.insert(name)
                continue
            }
            guard let value = inlineValue ?? rest.popFirst() else {
                throw UsageError(command: self, message: "'--\(name)' needs a value (\(spec.value!))")
            }
            if let choices = spec.choices, !choices.contains(value) {
                throw UsageError(command: self, message: "'\(value)' is not a valid value for '--\(name)'; "
                    + "use one of: \(choices.joined(separator: ", "))")
            }
            parsed.values[name] = value
        }
        return parsed
    }

    /// The text `--help` prints.
    func help(program: String) -> String {
        var lines = ["OVERVIEW: \(abstract)", ""]
        if !discussion.isEmpty { lines += [discussion, ""] }
        lines.append("USAGE: \(program) \(name) [<options>]")
        lines += ["", "OPTIONS:"]
        let all = options + [OptionSpec(name: "help", help: "Show help information.")]
        let labels = all.map { "--\($0.name)" + ($0.value.map { " <\($0)>" } ?? "") }
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (option, label) in zip(all, labels) {
            var text = option.help
            if let choices = option.choices { text += " (\(choices.joined(separator: "|")))" }
            if let d = option.defaultValue { text += " (default: \(d))" }
            lines += wrap(text, first: "  " + label.padded(width), indent: width + 2)
        }
        return lines.joined(separator: "\n")
    }

    /// `text` after `first`, wrapped at 100 columns with continuation lines indented.
    private func wrap(_ text: String, first: String, indent: Int) -> [String] {
        var lines: [String] = []
        var line = first
        var empty = true
        for word in text.split(separator: " ") {
            if !empty, line.count + 1 + word.count > 100 {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines
    }
}

/// The result of `CommandSpec.parse`.
struct ParsedOptions {
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var helpRequested = false

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func string(_ name: String) -> String? { values[name] }

    /// The option's value as an integer of at least `minimum`, or `fallback` when absent.
    func int(_ name: String, default fallback: Int, minimum: Int, in command: CommandSpec) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text), value >= minimum else {
            throw UsageError(command: command, message: "'--\(name)' needs an integer of at least \(minimum), got '\(text)'")
        }
        return value
    }

    /// The option's value as one of an enum's cases (the spec's `choices` checked it already).
    func choice<T: RawRepresentable>(_ name: String, default fallback: T) -> T where T.RawValue == String {
        values[name].flatMap(T.init(rawValue:)) ?? fallback
    }
}

/// Bad command-line input: printed with the command's usage, exit status 64.
struct UsageError: Error {
    let command: CommandSpec?
    let message: String
}
