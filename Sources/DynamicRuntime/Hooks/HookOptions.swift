/// How a hook behaves besides its position.
public struct HookOptions: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt32

    /// Options from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The hook removes itself after the first call that runs it, as Aspects'
    /// `AspectOptionAutomaticRemoval`. Of concurrent first calls, exactly one runs it.
    public static let removeAfterFirstCall = HookOptions(rawValue: 1 << 0)
}

/// Names one installed hook, for listing and removing hooks without keeping their token.
public struct HookIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The number, unique for the life of the process; the C API's `sf_hook_token`.
    public let rawValue: UInt64

    /// An identifier from its number (as the C API hands it out).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A readable form, for logs and test failures.
    public var description: String { "hook #\(rawValue)" }
}

/// One installed hook as a listing reports it.
public struct HookDescription: Hashable, Sendable, CustomStringConvertible {
    /// Removes it with `removeHook(_:)`.
    public let identifier: HookIdentifier
    /// The hooked method.
    public let selector: Selector
    /// Where it runs.
    public let position: HookPosition
    /// Whether it goes after its first call.
    public let removesAfterFirstCall: Bool

    /// A readable form, for logs and test failures.
    public var description: String {
        "\(identifier) \(position) \(selector.name)\(removesAfterFirstCall ? " (once)" : "")"
    }
}

extension HookChain {
    /// The chain's hooks on `selector`, in the order they run.
    func descriptions(_ selector: Selector) -> [HookDescription] {
        listed.map {
            HookDescription(identifier: HookIdentifier(rawValue: $0.entry.id), selector: selector,
                            position: $0.position, removesAfterFirstCall: $0.entry.once != nil)
        }
    }
}
