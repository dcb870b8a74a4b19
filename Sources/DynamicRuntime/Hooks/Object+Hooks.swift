import CDynamicRuntime
import Glibc

extension ObjectRef {
    /// Hooks `selector` for this object only; other instances of its class are untouched.
    /// Its hooks and its class's run merged position by position: class before hooks, then the
    /// object's; class instead hooks, then the object's (each newest first), then the original;
    /// class after hooks, then the object's.
    @discardableResult
    public func hook(_ selector: Selector, _ position: HookPosition = .before, expecting types: String? = nil,
                     _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        try hook(selector, position, expecting: types, objectGone: nil, body)
    }

    /// `hook`, with `objectGone` run if the object is deallocated while the hook is installed.
    func hook(_ selector: Selector, _ position: HookPosition, expecting types: String?, objectGone: (@Sendable () -> Void)?,
              _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        guard let raw else { throw .hookFailed(.init(selector: selector.name, expected: "an object", actual: "nil")) }
        return try HookRegistry.addObjectHook(raw, selector, position, expecting: types, objectGone: objectGone, wrapHookBody(body))
    }
}

extension Object {
    /// Hooks `selector` for this object only; see `ObjectRef.hook`.
    @discardableResult
    public func hook(_ selector: Selector, _ position: HookPosition = .before, expecting types: String? = nil,
                     _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        try ref.hook(selector, position, expecting: types, body)
    }
}
