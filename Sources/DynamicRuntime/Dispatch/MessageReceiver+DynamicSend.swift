import CDynamicRuntime

extension MessageReceiver {
    /// Where lookup starts; nil means the receiver's class. Super sends override it.
    public var lookupStart: sf_class_t? { nil }

    /// False: an ordinary send.
    public var isSuperSend: Bool { false }

    /// A dynamic send through libffi: argument count and types are checked against the method's
    /// signature, and the result comes back as a `DynamicValue`. On a miss, the forwarding path runs.
    ///
    /// - Throws: `doesNotRecognizeSelector`, `invalidArgument` (count or type), or forwarding errors.
    @discardableResult
    public func send(_ selector: Selector, _ arguments: any MessageArgument...) throws(RuntimeError) -> DynamicValue {
        try MessageSend.dynamic(self, selector, arguments)
    }

    /// The dynamic send with an argument array.
    @discardableResult
    public func send(_ selector: Selector, arguments: [any MessageArgument]) throws(RuntimeError) -> DynamicValue {
        try MessageSend.dynamic(self, selector, arguments)
    }

    /// A send whose lookup starts at `cls`'s superclass, like `[super …]` in a method of `cls`.
    public func asSuper(of cls: RuntimeClass) -> SuperReceiver {
        SuperReceiver(receiver: receiver, start: cls.lookupSuperclass)
    }
}
