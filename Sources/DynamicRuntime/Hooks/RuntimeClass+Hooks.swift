import CShims
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
