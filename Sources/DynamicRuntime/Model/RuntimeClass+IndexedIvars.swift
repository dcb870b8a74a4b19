import CDynamicRuntime

/// Extra bytes at allocation (`class_createInstance(cls, extraBytes)`) and
/// `object_getIndexedIvars`: storage after the ivars, aligned for any scalar (16 bytes, or
/// more when an ivar asked for more), zeroed, and freed with the object.
extension RuntimeClass {
    /// The largest `extraBytes` an instance may ask for (1 GiB): a larger request is a mistake.
    public static let maximumExtraBytes = 1 << 30

    /// Where an instance's indexed ivars start: the instance size rounded up to the alignment
    /// instances are allocated with.
    public var indexedIvarsOffset: Int {
        let align = Runtime.state.lock.withLock { instanceAlignment }
        return (instanceSize + align - 1) / align * align
    }

    /// Creates an instance with `extraBytes` of zeroed storage after its ivars, which
    /// `indexedIvars` returns.
    ///
    /// - Throws: `invalidArgument` for a negative count or one over `maximumExtraBytes`, and
    ///   what `createInstance()` throws.
    public func createInstance(extraBytes: Int) throws(RuntimeError) -> Object {
        guard extraBytes >= 0, extraBytes <= RuntimeClass.maximumExtraBytes else {
            throw .invalidArgument(.init(className: name, operation: "extraBytes", expected: "0...\(RuntimeClass.maximumExtraBytes)", actual: "\(extraBytes)"))
        }
        guard !isMetaclass else {
            throw .invalidArgument(.init(className: name, operation: "create an instance", expected: "a class", actual: "a metaclass"))
        }
        guard Runtime.state.lock.withLock({ isRegistered && !isDisposed }) else {
            throw .classNotRegistered(.init(className: name, operation: "create an instance"))
        }
        try ensureInitialized()
        return Object(adopting: ObjectLifecycle.allocate(self, extraBytes: extraBytes))
    }
}

extension MessageReceiver {
    /// The storage after the object's ivars (`object_getIndexedIvars`): as many bytes as it
    /// was created with (`createInstance(extraBytes:)`), none otherwise. Nil for nil and for
    /// class objects.
    public var indexedIvars: UnsafeMutableRawPointer? {
        guard let raw = receiver.raw, sf_object_flags(raw) & UInt32(SF_OBJ_IMMORTAL) == 0,
              let cls = sf_object_getClass(raw) else { return nil }
        return UnsafeMutableRawPointer(raw) + RuntimeClass.from(cls).indexedIvarsOffset
    }
}
