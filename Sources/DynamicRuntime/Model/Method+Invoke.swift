import CDynamicRuntime

/// `method_invoke`: calls a method's current implementation on a receiver directly, without
/// a lookup, through the dynamic send machinery (arguments checked against the signature).
extension Method {
    /// Calls this method on `receiver` with `arguments` and returns its result.
    ///
    /// - Throws: `invalidArgument` for a nil receiver, one that is not an instance of the
    ///   method's class or a subclass (for a class method: not that class or a subclass), or
    ///   arguments that do not match the signature; what the implementation throws.
    @discardableResult
    public func invoke(on receiver: some MessageReceiver, _ arguments: any MessageArgument...) throws(RuntimeError) -> DynamicValue {
        try invoke(on: receiver, arguments: arguments)
    }

    /// `invoke(on:_:)` with an argument array.
    @discardableResult
    public func invoke(on receiver: some MessageReceiver, arguments: [any MessageArgument]) throws(RuntimeError) -> DynamicValue {
        let raw = try checkedReceiver(receiver.receiver.raw)
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        return try MessageSend.call(raw, selector, cls: owningClass.raw, method: record.raw, arguments)
    }

    /// The receiver, if the method's IMP may run on it: its class chain must hold the
    /// method's class, or the IMP could read ivars past the object.
    func checkedReceiver(_ raw: sf_id?) throws(RuntimeError) -> sf_id {
        let owner = owningClass
        guard let raw else {
            throw .invalidArgument(.init(className: owner.name, selector: selector.name, expected: "a receiver", actual: "nil"))
        }
        var c: RuntimeClass? = RuntimeClass.from(sf_object_isa(raw)!)
        let actual = c!
        while let k = c {
            if k === owner { return raw }
            c = k.lookupSuperclass
        }
        throw .invalidArgument(.init(className: owner.name, selector: selector.name, expected: "a receiver of '\(owner.name)' or a subclass", actual: "\(actual.isMetaclass ? "the class" : "an instance of") '\(actual.visibleName)'"))
    }
}
