import DynamicRuntime

/// What applying or discarding a rule can get wrong.
public enum ThrottleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another rule already limits this selector in the class hierarchy (one rule per selector
    /// per hierarchy, as in MessageThrottle).
    case conflictingRule(selector: String, target: String, existingOn: String)
    /// The rule is already applied (to this or another engine).
    case alreadyApplied(selector: String, target: String)
    /// The rule's target instance has been deallocated.
    case targetDeallocated(selector: String)
    /// The runtime refused the hook (no such method, reserved selector, …).
    case runtime(RuntimeError)

    /// A sentence naming the selector and target, for logs and error messages.
    public var description: String {
        switch self {
        case let .conflictingRule(sel, target, existing):
            "cannot apply a rule for '\(sel)' on \(target): \(existing) already has a rule for it in the same class hierarchy"
        case let .alreadyApplied(sel, target):
            "the rule for '\(sel)' on \(target) is already applied"
        case let .targetDeallocated(sel):
            "the rule's target for '\(sel)' has been deallocated"
        case let .runtime(e):
            e.description
        }
    }
}
