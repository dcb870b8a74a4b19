import CDynamicRuntime

/// A hook asked for on a class by name before that class may exist (InterposeKit's
/// `whenAvailable`): it goes on when a class of that name is registered, or at once when one
/// is registered already. Made by `RuntimeClass.hook(whenRegistered:_:_:options:expecting:_:)`.
///
/// `register()` installs the hooks waiting for its class before it lets go of the runtime
/// lock that makes the class registered: no thread finds the class by name, or makes an
/// instance of it, before they are in place.
public final class PendingHook: @unchecked Sendable, CustomStringConvertible {
    /// Where a pending hook stands.
    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// No class of that name is registered yet.
        case waiting
        /// The hook is on the class; the token is the one `hook(_:_:expecting:_:)` returns.
        case installed(HookToken)
        /// The class was registered but could not be hooked: the error `hook(_:_:expecting:_:)`
        /// would have thrown (`hookFailed` when instances do not respond to the selector,
        /// `signatureMismatch` for other types), naming the class and the selector.
        case failed(RuntimeError)
        /// `remove()` dropped the waiting hook, or removed the installed one.
        case removed

        /// A readable form, for logs and test failures.
        public var description: String {
            switch self {
            case .waiting: "waiting"
            case let .installed(token): "installed (\(token.identifier))"
            case let .failed(error): "failed: \(error)"
            case .removed: "removed"
            }
        }
    }

    /// The name waited for: a class's own name, or an alias (`RuntimeClass.registerAlias(_:)`).
    public let className: String
    /// The method to hook.
    public let selector: Selector
    /// Where the hook runs.
    public let position: HookPosition
    /// How the hook behaves besides its position.
    public let options: HookOptions

    let key: NameKey
    let expected: Signature?
    /// Runs, under the runtime lock, with the token once the hook is installed: the C API
    /// files the token there. It takes no lock but its own leaf lock.
    let onInstall: (@Sendable (HookToken) -> Void)?
    // Guarded by Runtime.state.lock.
    var current: State = .waiting
    /// The hook's body while it waits; the hook chain holds it once installed (lock held).
    var body: HookRegistry.Body?
    /// A C hook's callback, which the chain calls instead of `body`.
    let native: NativeHookBody?

    init(key: NameKey, selector: Selector, position: HookPosition, options: HookOptions, expected: Signature?,
         body: @escaping HookRegistry.Body, native: NativeHookBody? = nil, onInstall: (@Sendable (HookToken) -> Void)?) {
        self.key = key
        className = key.displayName
        self.selector = selector
        self.position = position
        self.options = options
        self.expected = expected
        self.body = body
        self.native = native
        self.onInstall = onInstall
    }

    /// Where the hook stands now.
    public var state: State { Runtime.state.lock.withLock { current } }

    /// The installed hook's token, nil in every other state.
    public var token: HookToken? {
        if case let .installed(t) = state { return t }
        return nil
    }

    /// Drops the hook if it is still waiting: it never installs. Removes it if it is installed,
    /// as its token's `remove()` does (the method is restored exactly when its last hook goes).
    /// Returns whether it did either; calling it again, or on a failed hook, does nothing and
    /// returns false.
    @discardableResult
    public func remove() -> Bool { take().removed }

    /// `remove()`, also answering the token of the hook it removed (nil for one still waiting).
    func take() -> (removed: Bool, token: HookToken?) {
        var dropped: HookRegistry.Body?
        // A body's captures may run any deinit: release it after the lock.
        defer { withExtendedLifetime(dropped) {} }
        let (wasWaiting, installed) = Runtime.state.lock.withLock { () -> (Bool, HookToken?) in
            switch current {
            case .waiting:
                HookRegistry.dropPending(self)
                dropped = body
                body = nil
                current = .removed
                return (true, nil)
            case let .installed(t):
                current = .removed
                return (false, t)
            case .failed, .removed:
                return (false, nil)
            }
        }
        if wasWaiting { return (true, nil) }
        guard let installed else { return (false, nil) }
        return (installed.remove(), installed)
    }

    /// A readable form, for logs and test failures.
    public var description: String {
        "PendingHook(\(position) -[\(className) \(selector.name)] \(state))"
    }
}
