import CShims

/// Proxies in the style of NSProxy: root classes whose instances forward every message to a
/// wrapped target through `forwardInvocation:`.
public enum Proxy {
    /// The strong ivar that holds a proxy's target.
    public static let targetIvarName = "target"

    /// Creates a proxy class. `intercept` sees each invocation and calls `proceed` to send it
    /// on to the target (the default does just that).
    public static func makeClass(
        name: String,
        intercept: (@Sendable (Invocation, _ proceed: () throws -> Void) throws -> Void)? = nil
    ) throws(RuntimeError) -> RuntimeClass {
        let cls = try RuntimeClass(name: name, ivars: [(targetIvarName, .object)])
        let ivar = cls.ivar(named: targetIvarName)!
        try cls.setMethodSignature { recv, sel in
            guard let target = try? recv.value(of: ivar, as: ObjectRef.self), let t = target.raw,
                  let m = sf_class_getInstanceMethod(sf_object_isa(t), sel.raw) else { return nil }
            return Signature(raw: sf_method_sig(m))
        }
        // A proxy answers for its target's protocols (NSProxy forwards conformsToProtocol:).
        try cls.addMethod(conformsToProtocolSelector) { (recv: ObjectRef, p: UnsafeMutableRawPointer) -> Bool in
            guard let proto = RuntimeProtocol.validated(p),
                  let target = try? recv.value(of: ivar, as: ObjectRef.self), target.raw != nil else { return false }
            return target.conforms(to: proto)
        }
        try cls.setForwardInvocation { invocation in
            let target = try invocation.target.value(of: ivar, as: ObjectRef.self)
            let proceed = { () throws in try invocation.invoke(target: target) }
            if let intercept { try intercept(invocation, proceed) } else { try proceed() }
        }
        return cls
    }

    /// A new proxy of `proxyClass` (made by `makeClass`) wrapping `target` (retained).
    public static func create(_ proxyClass: RuntimeClass, wrapping target: some MessageReceiver) throws(RuntimeError) -> Object {
        guard let ivar = proxyClass.ivar(named: targetIvarName) else {
            throw .invalidArgument(.init(className: proxyClass.name, expected: "a proxy class (with a '\(targetIvarName)' ivar)", actual: "another class"))
        }
        let proxy = try proxyClass.createInstance()
        try proxy.setValue(target.receiver, for: ivar)
        return proxy
    }
}
