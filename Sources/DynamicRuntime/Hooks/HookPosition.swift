import CDynamicRuntime
import Glibc
import Synchronization

/// Where a hook runs relative to the method's original implementation.
public enum HookPosition: Sendable, CustomStringConvertible {
    /// Before the original, in the order hooks were added; may change arguments.
    case before
    /// Around the original: the newest runs first and calls `proceed()` to run the next one
    /// (and finally the original); not calling it drops the call.
    case instead
    /// After the original, in the order hooks were added; sees and may change the return value.
    case after

    /// A readable form, for logs and test failures.
    public var description: String {
        switch self {
        case .before: "before"
        case .instead: "instead"
        case .after: "after"
        }
    }
}
