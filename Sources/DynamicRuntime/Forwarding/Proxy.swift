import CDynamicRuntime

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
        let proxyClass = UInt(bitPattern: cls.raw), offset = ivar.offset  // Sendable captures
        try cls.setMethodSignatureTypes { recv, sel in
            guard let t = target(of: recv, proxyClass, offset),
                  let m = sf_class_getInstanceMethod(sf_object_isa(t), sel.raw) else { return nil }
            return sf_method_sig(m)
        }
        // A proxy answers for its target's protocols (NSProxy forwards conformsToProtocol:).
        try cls.addMethod(conformsToProtocolSelector) { (recv: ObjectRef, p: UnsafeMutableRawPointer) -> Bool in
            guard let proto = RuntimeProtocol.validated(p),
                  let target = try? recv.value(of: ivar, as: ObjectRef.self), target.raw != nil else { return false }
            return target.conforms(to: proto)
        }
        try cls.setForwardInvocation { invocation in
            guard let raw = target(of: invocation.target, proxyClass, offset) else {
                throw RuntimeError.invalidArgument(.init(className: invocation.className, selector: invocation.selector.name,
                                                         ivar: targetIvarName, reason: "no such ivar in this class chain"))
            }
            // No `proceed` closure unless an intercept takes one: it would be allocated per call.
            if let intercept {
                try intercept(invocation) { try invocation.invoke(target: ObjectRef(raw)) }
            } else {
                try invocation.invoke(target: ObjectRef(raw))
            }
        }
        return cls
    }

    /// The target of `recv` when it is an instance of `proxyClass` (or a subclass): a load at
    /// the ivar's offset, where `value(of:)` looked the ivar up by name on every forwarded call.
    private static func target(of recv: ObjectRef, _ proxyClass: UInt, _ offset: Int) -> sf_id? {
        guard let raw = recv.raw else { return nil }
        var c = sf_object_isa(raw)
        while let k = c {
            if UInt(bitPattern: k) == proxyClass { return (UnsafeRawPointer(raw) + offset).load(as: sf_id?.self) }
            c = sf_class_super(k)
        }
        return nil
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
