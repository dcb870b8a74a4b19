import DynamicRuntime

/// What a rule limits: one object, the instance methods of a class, or its class methods.
public enum RuleTarget: CustomStringConvertible, @unchecked Sendable {
    /// One object; other instances of its class are untouched. Held weakly: the rule is
    /// discarded automatically when the object is deallocated.
    case instance(WeakReference, identity: UnsafeMutableRawPointer, className: String)
    /// Every instance of a class (and of its subclasses).
    case instances(of: RuntimeClass)
    /// A class's class methods (the metaclass).
    case classMethods(of: RuntimeClass)

    /// Derives the target from a receiver: an object, a class (instances) or a metaclass.
    init(_ receiver: some MessageReceiver) {
        if let cls = receiver as? RuntimeClass {
            self = cls.isMetaclass ? .classMethods(of: cls.instanceClass) : .instances(of: cls)
        } else {
            let ref = receiver.receiver
            let weak = WeakReference(holding: ref)
            // nil has no identity: the weak reference's own address stands in (it matches no
            // object), and applying the rule throws `targetDeallocated` instead of crashing.
            let identity = ref.raw.map(UnsafeMutableRawPointer.init) ?? ObjectWord(unretained: weak).pointer
            self = .instance(weak, identity: identity, className: receiver.runtimeClass?.name ?? "nil")
        }
    }

    /// The target as logs show it: `<Class: address>`, `instances of C` or `class C`.
    public var description: String {
        switch self {
        case let .instance(_, identity, name): "<\(name): \(identity)>"
        case let .instances(cls): "instances of \(cls.name)"
        case let .classMethods(cls): "class \(cls.name)"
        }
    }
}
