import CShims
import Glibc

extension ObjectRef {
    /// Hooks `selector` for this object only (it gets a private subclass, as KVO does);
    /// other instances of its class are untouched.
    @discardableResult
    public func hook(_ selector: Selector, _ position: HookPosition = .before, expecting types: String? = nil,
                     _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        guard let raw else { throw .hookFailed(.init(selector: selector.name, expected: "an object", actual: "nil")) }
        let hidden = try HookRegistry.hiddenClass(for: raw)
        return try HookRegistry.add(on: hidden, selector, position, expecting: types, wrapHookBody(body))
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
