import CDynamicRuntime
import Glibc
import Synchronization

/// A handle to one installed hook. `remove()` uninstalls it; the method is restored exactly
/// (same IMP pointer) when its last hook goes.
public final class HookToken: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The id, with the position in the top two bits: a token is one 48-byte malloc chunk, and
    /// an object with a hook of its own keeps one.
    private let bits: UInt64
    let hook: MethodHook
    /// For a hook of an object's own: the object's side table, which holds its hooks.
    let side: ObjectSideTable?

    init(id: UInt64, hook: MethodHook, position: HookPosition, side: ObjectSideTable? = nil) {
        let code: UInt64 = switch position {
        case .before: 0
        case .instead: 1
        case .after: 2
        }
        bits = id | code << 62
        self.hook = hook
        self.side = side
    }

    var id: UInt64 { bits & ~(3 << 62) }

    /// Where the hook runs.
    public var position: HookPosition {
        switch bits >> 62 {
        case 0: .before
        case 1: .instead
        default: .after
        }
    }

    /// Names the hook in listings and for `removeHook(_:)`.
    public var identifier: HookIdentifier { HookIdentifier(rawValue: id) }

    /// Whether the hook is still installed.
    public var isActive: Bool {
        if let side { return HookRegistry.isActive(side, id) }
        return Runtime.state.lock.withLock { hook.record?.hook === hook && hook.isInTable && hook.contains(id) }
    }

    /// Uninstalls the hook. Removing twice is harmless and returns false.
    @discardableResult
    public func remove() -> Bool { HookRegistry.remove(self) }

    /// Whether the two are the same (identity, not contents).
    public static func == (a: HookToken, b: HookToken) -> Bool { a === b }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// A readable form, for logs and test failures.
    public var description: String { "HookToken(\(position) -[\(hook.cls.visibleName) \(hook.selector.name)]\(side == nil ? "" : " (one object)"))" }
}
