import CDynamicRuntime
import Glibc

/// Anything that can receive messages: objects, object references and classes.
public protocol MessageReceiver {
    /// The receiving object (for a class: the class object).
    var receiver: ObjectRef { get }
    /// Where lookup starts; nil means the receiver's class. Super sends override it.
    var lookupStart: sf_class_t? { get }
    /// Whether this is a super send, whose nil `lookupStart` means "no superclass" (the send
    /// then fails with `doesNotRecognizeSelector`) rather than "the receiver's class".
    var isSuperSend: Bool { get }
}

extension ObjectRef: MessageReceiver {
    /// The reference itself.
    public var receiver: ObjectRef { self }
}

extension Object: MessageReceiver {
    /// The object, unretained.
    public var receiver: ObjectRef { ObjectRef(raw) }
}

extension RuntimeClass: MessageReceiver {
    /// The class object, which receives class methods.
    public var receiver: ObjectRef { ObjectRef(sf_class_as_object(raw)) }
}

extension MessageReceiver {
    /// The object's class (for a class object: its metaclass), hiding hook subclasses.
    public var runtimeClass: RuntimeClass? {
        guard let raw = receiver.raw, let cls = sf_object_getClass(raw) else { return nil }
        return RuntimeClass.from(cls)
    }

    /// Whether the object's class (or the class, for class objects) is `cls` or inherits from it.
    public func isKind(of cls: RuntimeClass) -> Bool { runtimeClass?.isSubclass(of: cls) ?? false }

    /// Whether a send of `selector` would find a method, or the resolver would add one.
    public func responds(to selector: Selector) -> Bool {
        guard let raw = receiver.raw else { return false }
        let cls = sf_object_isa(raw)!
        let found = { () -> Bool in
            sf_rcu_enter()
            defer { sf_rcu_exit() }
            return sf_lookup_method(cls, selector.raw) != nil
        }()
        return found || Forwarding.resolveForLookup(cls, selector)
    }

    /// The current strong reference count (immortal objects such as classes report Int.max).
    public var retainCount: Int {
        guard let raw = receiver.raw else { return 0 }
        let n = sf_object_retainCount(raw)
        return n == UInt.max ? Int.max : Int(n)
    }
}
