import CDynamicRuntime
import Glibc

extension RuntimeClass {
    /// Hooks `selector` for every instance (for a metaclass: the class method). `body` runs at
    /// `position` with the call's `HookContext`. Hooking an inherited method gives this class
    /// its own entry, leaving the superclass untouched.
    ///
    /// - Parameters:
    ///   - selector: the method to hook, implemented by this class or inherited.
    ///   - position: `.before`, `.after` or `.instead` of the original.
    ///   - types: the signature the hook expects, checked against the method's.
    ///   - body: the hook; an `.instead` hook calls `proceed()` to run the original.
    /// - Returns: the token whose `remove()` takes the hook out again.
    /// - Throws: `hookFailed` (no such method), `reservedSelector`, `signatureMismatch`.
    @discardableResult
    public func hook(_ selector: Selector, _ position: HookPosition = .before, expecting types: String? = nil,
                     _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        try HookRegistry.add(on: self, selector, position, expecting: types, wrapHookBody(body))
    }

    /// Hooks the class method `selector` (a hook on the metaclass).
    @discardableResult
    public func hookClassMethod(_ selector: Selector, _ position: HookPosition = .before, expecting types: String? = nil,
                                _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        try HookRegistry.add(on: instanceClass.metaclass, selector, position, expecting: types, wrapHookBody(body))
    }

    /// Hooks `selector` for every instance of the class named `className` as soon as there is
    /// one (InterposeKit's `whenAvailable`): at once when such a class is registered, otherwise
    /// when `register()` registers it, on the registering thread, before `register()` returns.
    /// No thread finds the class by name or makes an instance of it before the hook is in place.
    ///
    /// The name matches as `named(_:)` does: a class's own name or an alias. A hook waiting for
    /// an alias goes on when `registerAlias(_:)` adds it; messages the class received before
    /// then ran without it. Hooks waiting for one name go on in the order they were asked for,
    /// so they run as if `hook(_:_:options:expecting:_:)` had been called in that order.
    ///
    /// ```swift
    /// let pending = try RuntimeClass.hook(whenRegistered: "Account", "deposit:", .after) { call in
    ///     print("deposited", try call.argument(at: 0, as: Int.self))
    /// }
    /// // … later, whoever defines Account registers it; the hook is on from its first message.
    /// pending.remove()   // not installed yet: it never will be; installed: it comes off
    /// ```
    ///
    /// - Parameters:
    ///   - className: the name of the class to hook, registered or not.
    ///   - selector: the method to hook, implemented by that class or inherited.
    ///   - position: `.before`, `.after` or `.instead` of the original.
    ///   - options: e.g. `.removeAfterFirstCall`.
    ///   - types: the signature the hook expects, checked against the method's when it installs.
    ///   - body: the hook; an `.instead` hook calls `proceed()` to run the original.
    /// - Returns: the pending hook, whose `state` says whether it is waiting, installed (with
    ///   its ``HookToken``) or failed, and whose `remove()` takes it back in any state.
    /// - Throws: what no class could change: `invalidArgument` for an empty name or one with a
    ///   NUL, `reservedSelector`, `malformedEncoding` for `types`. What depends on the class (no
    ///   such method, other types, a full chain) is the `failed` state, when the class registers
    ///   or at once.
    @discardableResult
    public static func hook(whenRegistered className: String, _ selector: Selector, _ position: HookPosition = .before,
                            options: HookOptions = [], expecting types: String? = nil,
                            _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> PendingHook {
        try HookRegistry.addPending(key: NameKey(className), selector, position, options: options,
                                    expecting: types, wrapHookBody(body))
    }

    /// Observes messages before they run, like RxCocoa's `sentMessage`.
    @discardableResult
    public func onMessageSent(_ selector: Selector, _ body: @escaping @Sendable (ObjectRef, [DynamicValue]) -> Void) throws(RuntimeError) -> HookToken {
        try hook(selector, .before) { ctx in body(ctx.target, ctx.argumentValues) }
    }

    /// Observes completed calls with their result, like RxCocoa's `methodInvoked`.
    @discardableResult
    public func onMethodInvoked(_ selector: Selector,
                                _ body: @escaping @Sendable (ObjectRef, [DynamicValue], DynamicValue) -> Void) throws(RuntimeError) -> HookToken {
        try hook(selector, .after) { ctx in body(ctx.target, ctx.argumentValues, ctx.returnValue) }
    }
}


/// Hook bodies are stored as given; `hookError` converts what they throw where they are called.
func wrapHookBody(_ body: @escaping @Sendable (HookContext) throws -> Void) -> HookRegistry.Body { body }

/// Hook bodies may throw anything; the sender receives it as a RuntimeError naming the method,
/// the body's own error kept as `underlying`.
func hookError(_ error: any Error, _ ctx: HookContext) -> RuntimeError {
    if let e = error as? RuntimeError { return e }
    return .implementationFailed(.init(className: ctx.hook.cls.visibleName, selector: ctx.selector.name, underlying: error))
}
