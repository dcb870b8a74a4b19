import CDynamicRuntime

/// Adopting protocols, and conformance through superclasses and incorporated protocols.
extension RuntimeClass {
    /// Adopts a registered protocol; false when this class already adopted it itself.
    ///
    /// - Throws: `classNotRegistered` when the protocol is not registered yet,
    ///   `invalidArgument` for a metaclass.
    @discardableResult
    public func addProtocol(_ proto: RuntimeProtocol) throws(RuntimeError) -> Bool {
        guard !isMetaclass else {
            throw .invalidArgument(.init(className: name, operation: "adopt a protocol", expected: "a class", actual: "a metaclass"))
        }
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> Bool in
            guard proto.isRegistered else { throw .classNotRegistered(.init(className: proto.name, operation: "adopt it")) }
            if adoptedProtocols.contains(where: { $0 === proto }) { return false }
            adoptedProtocols.append(proto)
            return true
        }
    }

    /// The protocols this class adopted itself (not its superclasses'), in adoption order.
    public var protocols: [RuntimeProtocol] { Runtime.state.lock.withLock { instanceClass.adoptedProtocols } }

    /// Whether this class, a superclass, or a protocol either adopted incorporates `proto`.
    public func conforms(to proto: RuntimeProtocol) -> Bool {
        Runtime.state.lock.withLock {
            var c: RuntimeClass? = instanceClass
            while let k = c {
                if k.adoptedProtocols.contains(where: { $0.conformsLocked(to: proto) }) { return true }
                c = k.superclass
            }
            return false
        }
    }
}

/// The selector a class defines to answer for conformance itself (a forwarding proxy asks its
/// target): `B@:^v`, the argument being the protocol's C handle.
public let conformsToProtocolSelector = Selector("conformsToProtocol:")

extension MessageReceiver {
    /// Whether the object's class conforms to `proto` — or, when the class defines
    /// `conformsToProtocol:` (as `Proxy` classes do), what that method answers.
    public func conforms(to proto: RuntimeProtocol) -> Bool {
        guard let raw = receiver.raw, let cls = runtimeClass else { return false }
        if cls.instanceClass.conforms(to: proto) { return true }
        guard cls.method(for: conformsToProtocolSelector) != nil else { return false }
        let answer: Bool? = try? ObjectRef(raw).send(conformsToProtocolSelector, UnsafeMutableRawPointer(proto.raw))
        return answer ?? false
    }
}
