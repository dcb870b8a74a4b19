import CDynamicRuntime

/// Weak proxies, as YYWeakProxy: the proxy holds its target weakly, so a timer or a display
/// link that retains the proxy does not keep the target alive.
///
/// While the target lives, every message is forwarded to it (stage 2, `forwardingTargetForSelector:`,
/// with the caller's frame unchanged). Once it is gone, stage 2 names no one and stage 3 runs:
/// a message whose caller expects no result (a dynamic send, a `Void` send) is dropped and reads
/// zero/nil; a typed send expecting a result throws `forwardingFailed` naming the selector.
/// `responds(to:)` answers for the proxy class itself (it is a lookup, as on NSProxy); ask
/// ``targetResponds(_:to:)`` for the target's answer.
extension Proxy {
    private static let weakTargetKey = AssociationKey("Proxy.weakTarget")

    /// Creates a weak proxy class: a root class with no ivars whose instances forward to a
    /// weakly held target.
    public static func makeWeakClass(name: String) throws(RuntimeError) -> RuntimeClass {
        let cls = try RuntimeClass(name: name)
        try cls.replaceMethod(Forwarding.forwardingTarget) { (recv: ObjectRef, _: Selector) -> Object? in
            weakTarget(of: recv)
        }
        try cls.setForwardInvocation { invocation in
            // Reached only when the target is gone (or stage 2 declined): drop the message.
            guard invocation.signature.returnType == .void else {
                throw RuntimeError.forwardingFailed(.init(className: name, selector: invocation.selector.name, reason: "the weak proxy's target has been deallocated; the caller expects a result"))
            }
        }
        return cls
    }

    /// A new proxy of `weakClass` (made by `makeWeakClass`) holding `target` weakly.
    public static func createWeak(_ weakClass: RuntimeClass, wrapping target: some MessageReceiver) throws(RuntimeError) -> Object {
        guard weakClass.ownMethod(for: Forwarding.forwardingTarget) != nil, weakClass.ivar(named: targetIvarName) == nil else {
            throw .invalidArgument(.init(className: weakClass.name, expected: "a weak proxy class (Proxy.makeWeakClass)", actual: "another class"))
        }
        let proxy = try weakClass.createInstance()
        proxy.setAssociatedValue(WeakReference(holding: target), for: weakTargetKey)
        return proxy
    }

    /// The live target of a weak proxy (retained for the caller), or nil once it is gone.
    public static func weakTarget(of proxy: some MessageReceiver) -> Object? {
        (proxy.associatedValue(for: weakTargetKey) as? WeakReference)?.object
    }

    /// Whether the weak proxy's target is alive and answers `selector`.
    public static func targetResponds(_ proxy: some MessageReceiver, to selector: Selector) -> Bool {
        weakTarget(of: proxy)?.responds(to: selector) ?? false
    }
}
