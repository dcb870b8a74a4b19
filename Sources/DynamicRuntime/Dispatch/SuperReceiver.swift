import CDynamicRuntime

/// A receiver for `super` sends: the same object, with lookup starting at a given class.
public struct SuperReceiver: MessageReceiver {
    /// The object that receives the message.
    public let receiver: ObjectRef
    let start: RuntimeClass?
    /// The superclass of the class the send is written in: lookup starts there.
    public var lookupStart: sf_class_t? { start?.raw ?? nil }
    /// True: a nil `lookupStart` means there is no superclass to look in (a root class).
    public var isSuperSend: Bool { true }
}
