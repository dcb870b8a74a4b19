import CDynamicRuntime

/// Small objects (tagged pointers), as `objc_registerSmallObjectClass_np` and objc4's tagged
/// pointers: a value that is an object without an allocation. The reference itself holds a
/// tag, naming one of ``RuntimeClass/smallObjectTagCount`` registered classes, and a payload
/// of 60 bits. Messages go to the tag's class (its class hooks included); retain and release
/// do nothing. See docs/architecture.md, "Small objects".
extension RuntimeClass {
    /// How many classes can be registered as small-object classes (tags `0..<8`).
    public static let smallObjectTagCount = Int(SF_TAGGED_TAG_COUNT)

    /// Makes this class the class of the small objects of `tag`, for good (the class can no
    /// longer be disposed). Registering the same class under the same tag again does nothing.
    ///
    /// - Throws: `invalidArgument` for a metaclass, a per-object hook class, a tag outside
    ///   `0..<smallObjectTagCount`, a tag taken by another class, or a class already registered
    ///   under another tag; `classNotRegistered` before `register()`; `incompatibleClass` when
    ///   the class has ivars (its own or inherited): a small object has no storage for them.
    public func registerSmallObjectClass(tag: Int) throws(RuntimeError) {
        let operation = "registerSmallObjectClass"
        guard !isMetaclass, !isHidden else {
            throw .invalidArgument(.init(className: name, operation: operation, expected: "an ordinary class", actual: isMetaclass ? "a metaclass" : "a per-object hook class"))
        }
        guard (0..<Self.smallObjectTagCount).contains(tag) else {
            throw .invalidArgument(.init(className: name, operation: operation, expected: "a tag from 0 to \(Self.smallObjectTagCount - 1)", actual: "\(tag)"))
        }
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard isRegistered, !isDisposed else { throw .classNotRegistered(.init(className: name, operation: operation)) }
            let header = Int(sf_object_header_size())
            guard instanceSize == header else {
                throw .incompatibleClass(.init(className: name, operation: operation, reason: "a small object has no storage for ivars; '\(name)' has \(instanceSize - header) bytes of them"))
            }
            if let taken = sf_small_class_get(UInt32(tag)) {
                if taken == raw { return }
                throw .invalidArgument(.init(className: name, operation: operation, expected: "a free tag", actual: "tag \(tag), taken by '\(RuntimeClass.from(taken).name)'"))
            }
            if let own = smallObjectTag {
                throw .invalidArgument(.init(className: name, operation: operation, expected: "a class without a tag", actual: "a class registered under tag \(own)"))
            }
            sf_small_class_set(UInt32(tag), raw)
        }
    }

    /// The tag this class is registered under as a small-object class, if any.
    public var smallObjectTag: Int? {
        (0..<Self.smallObjectTagCount).first { sf_small_class_get(UInt32($0)) == raw }
    }

    /// The class registered for `tag`, if any.
    public static func smallObjectClass(tag: Int) -> RuntimeClass? {
        guard (0..<smallObjectTagCount).contains(tag) else { return nil }
        return sf_small_class_get(UInt32(tag)).map(RuntimeClass.from)
    }
}

extension ObjectRef {
    /// The largest payload a small object holds (2^60 - 1).
    public static let maxTaggedPayload: UInt = (1 << 60) - 1

    /// The small object of `tag` (registered with
    /// ``RuntimeClass/registerSmallObjectClass(tag:)``) carrying `payload`. It needs no
    /// allocation and no release; two made from the same tag and payload are the same object.
    ///
    /// - Throws: `invalidArgument` for a tag outside `0..<smallObjectTagCount` or with no
    ///   class registered, or a payload above ``maxTaggedPayload``.
    public static func tagged(tag: Int, payload: UInt) throws(RuntimeError) -> ObjectRef {
        let operation = "make a small object"
        guard (0..<RuntimeClass.smallObjectTagCount).contains(tag) else {
            throw .invalidArgument(.init(operation: operation, expected: "a tag from 0 to \(RuntimeClass.smallObjectTagCount - 1)", actual: "\(tag)"))
        }
        guard payload <= maxTaggedPayload else {
            throw .invalidArgument(.init(operation: operation, expected: "a payload up to 2^60 - 1", actual: "\(payload)"))
        }
        guard sf_small_class_get(UInt32(tag)) != nil else {
            throw .invalidArgument(.init(operation: operation, expected: "a tag with a registered class", actual: "tag \(tag), free"))
        }
        return ObjectRef(sf_tagged_make(UInt32(tag), payload))
    }

    /// Whether this is a small object (a tagged pointer) rather than an allocated one.
    public var isTagged: Bool { raw.map { sf_object_isTagged($0) } ?? false }

    /// The payload of a small object; nil for nil and for allocated objects.
    public var taggedPayload: UInt? {
        guard let raw, sf_object_isTagged(raw) else { return nil }
        return UInt(bitPattern: raw) & Self.maxTaggedPayload
    }

    /// The tag of a small object; nil for nil and for allocated objects.
    public var taggedTag: Int? {
        guard let raw, sf_object_isTagged(raw) else { return nil }
        return Int(sf_tagged_getTag(raw))
    }
}

extension RuntimeError {
    /// The refusal of an operation that needs storage of the object's own (ivars, associations,
    /// observers, per-object hooks) for a small object, which has none.
    static func taggedObject(_ obj: sf_id, _ operation: String, selector: String? = nil, ivar: String? = nil,
                             because reason: String = "which has no storage of its own") -> RuntimeError {
        .invalidArgument(.init(className: sf_object_getClass(obj).map { String(cString: sf_class_getName($0)) }, selector: selector, ivar: ivar, operation: operation,
                               expected: "an allocated object", actual: "a small (tagged) object, \(reason)"))
    }

    /// The refusal of a weak reference to a small object, which is never deallocated.
    static func taggedWeak(_ obj: sf_id, _ operation: String = "refer to it weakly", ivar: String? = nil) -> RuntimeError {
        taggedObject(obj, operation, ivar: ivar, because: "which is never deallocated, so nothing could zero a weak reference to it")
    }
}
