extension ObjectRef {
    /// The calls of `selector` on this object only, before or after the original runs, as an
    /// `AsyncSequence` (see ``MessageStream`` for back-pressure and cancellation). Other
    /// instances of its class are untouched. The stream ends when the object is deallocated,
    /// after its last call. It does not keep the object alive.
    ///
    /// - Throws: `hookFailed` (nil, or no such method), `reservedSelector`.
    public func messages(_ selector: Selector, _ timing: MessageStream.Timing = .beforeOriginal,
                         bufferingPolicy: MessageStream.BufferingPolicy = .unbounded) throws(RuntimeError) -> MessageStream {
        try MessageStream.make(timing, bufferingPolicy) { body, objectGone throws(RuntimeError) in
            try hook(selector, timing == .beforeOriginal ? .before : .after, expecting: nil, objectGone: objectGone, body)
        }
    }

    /// This object's deallocation, as an `AsyncSequence` of at most one element.
    public var deallocation: DeallocationStream { DeallocationStream.make(self) }
}

extension Object {
    /// The calls of `selector` on this object only, ending at its deallocation; see
    /// ``ObjectRef/messages(_:_:bufferingPolicy:)``.
    public func messages(_ selector: Selector, _ timing: MessageStream.Timing = .beforeOriginal,
                         bufferingPolicy: MessageStream.BufferingPolicy = .unbounded) throws(RuntimeError) -> MessageStream {
        try ref.messages(selector, timing, bufferingPolicy: bufferingPolicy)
    }

    /// This object's deallocation; see ``ObjectRef/deallocation``. The stream does not keep
    /// the object alive.
    public var deallocation: DeallocationStream { ref.deallocation }
}

extension RuntimeClass {
    /// The calls of `selector` on every instance of this class and its subclasses (for a
    /// metaclass: the class method), before or after the original runs, as an
    /// `AsyncSequence` (see ``MessageStream`` for back-pressure and cancellation).
    ///
    /// - Throws: `hookFailed` (no such method), `reservedSelector`.
    public func messages(_ selector: Selector, _ timing: MessageStream.Timing = .beforeOriginal,
                         bufferingPolicy: MessageStream.BufferingPolicy = .unbounded) throws(RuntimeError) -> MessageStream {
        // A class's stream is not an object's: no instance's deallocation ends it.
        try MessageStream.make(timing, bufferingPolicy) { body, _ throws(RuntimeError) in
            try hook(selector, timing == .beforeOriginal ? .before : .after, body)
        }
    }
}
