import CDynamicRuntime
import Glibc

/// isa swizzling (`object_setClass`), the mechanism of KVO-style observers, with the checks
/// that keep it memory-safe: the new class must fit the object's allocation and hold its
/// strong object slots at the same offsets, so no ivar is read past the object, no pointer is
/// released that is not one, and none is stranded.
extension MessageReceiver {
    /// Makes `cls` the object's class and returns the previous one.
    ///
    /// An object with hooks of its own keeps them: they move to the new class's hidden
    /// subclass, so every hook still runs and `runtimeClass` answers `cls`; removing the last
    /// hook later leaves `cls` installed.
    ///
    /// - Throws: `incompatibleClass` when `cls` is larger than the object's allocation, needs
    ///   more alignment, or keeps strong ivars at other offsets; when the object has hooks of
    ///   its own on a method `cls` lacks or implements with other types; when it is being
    ///   deallocated, or is a small (tagged) object. `invalidArgument` for nil, a class object,
    ///   a metaclass, or an unregistered class.
    @discardableResult
    public func setClass(_ cls: RuntimeClass) throws(RuntimeError) -> RuntimeClass {
        guard let obj = receiver.raw else {
            throw .invalidArgument(.init(operation: "setClass", expected: "an object", actual: "nil"))
        }
        guard !sf_object_isTagged(obj) else {
            throw .incompatibleClass(.init(className: String(cString: sf_class_getName(sf_object_getClass(obj))), operation: "setClass", target: cls.name, reason: "a small (tagged) object's class is its tag"))
        }
        guard sf_object_flags(obj) & UInt32(SF_OBJ_IMMORTAL) == 0 else {
            throw .invalidArgument(.init(className: String(cString: sf_class_getName(sf_object_getClass(obj))), operation: "setClass", expected: "an instance", actual: "a class object (its class is its metaclass)"))
        }
        guard !cls.isMetaclass, !cls.isHidden else {
            throw .invalidArgument(.init(operation: "setClass", expected: "an ordinary class", actual: "metaclass '\(cls.name)'"))
        }
        // The hidden subclass an object with hooks of its own moves to is made outside the lock.
        var hiddenTarget: RuntimeClass?
        while true {
            if hiddenTarget == nil, sf_class_info(sf_object_isa(obj)!) & UInt32(SF_CLASS_HIDDEN) != 0 {
                hiddenTarget = try HookRegistry.objectHookClass(of: cls)
            }
            if let previous = try setClassNolockRetrying(obj, cls, hiddenTarget: hiddenTarget) { return previous }
        }
    }

    /// One attempt; nil when the object gained hooks meanwhile and a hidden target must be made.
    private func setClassNolockRetrying(_ obj: sf_id, _ cls: RuntimeClass, hiddenTarget: RuntimeClass?) throws(RuntimeError) -> RuntimeClass? {
        try Runtime.state.lock.withLock { () throws(RuntimeError) -> RuntimeClass? in
            let isa = sf_object_isa(obj)!
            let current = RuntimeClass.from(sf_object_getClass(obj)!)
            guard cls.isRegistered, !cls.isDisposed else { throw .classNotRegistered(.init(className: cls.name, operation: "make it an object's class")) }
            if current === cls { return current }
            func refuse(_ reason: String) -> RuntimeError { .incompatibleClass(.init(className: current.name, target: cls.name, reason: reason)) }
            if sf_object_flags(obj) & UInt32(SF_OBJ_DEALLOCATING) != 0 { throw refuse("the object is being deallocated") }
            let hooked = sf_class_info(isa) & UInt32(SF_CLASS_HIDDEN) != 0
            if hooked, hiddenTarget == nil { return nil }
            let allocated = sf_object_allocated_size(obj)
            if cls.instanceSize > allocated {
                throw refuse("its instances are \(cls.instanceSize) bytes; this object has \(allocated)")
            }
            if cls.instanceAlignment > current.instanceAlignment, Int(bitPattern: UInt(bitPattern: obj)) % cls.instanceAlignment != 0 {
                throw refuse("its ivars need \(cls.instanceAlignment)-byte alignment")
            }
            if Set(cls.objectIvarOffsets) != Set(current.objectIvarOffsets) {
                throw refuse("strong object ivars at offsets \(cls.objectIvarOffsets.sorted()), not \(current.objectIvarOffsets.sorted())")
            }
            if Set(cls.weakIvarOffsets) != Set(current.weakIvarOffsets) {
                throw refuse("weak object ivars at offsets \(cls.weakIvarOffsets.sorted()), not \(current.weakIvarOffsets.sorted())")
            }
            sf_class_adjust_live_instances(cls.raw, 1)
            if hooked {
                do throws(RuntimeError) {
                    try HookRegistry.moveObjectHooks(obj, from: RuntimeClass.from(isa), to: hiddenTarget!, refuse)
                } catch {
                    sf_class_adjust_live_instances(cls.raw, -1)
                    throw error
                }
            } else {
                sf_object_set_isa(obj, cls.raw)
            }
            sf_class_adjust_live_instances(current.raw, -1)
            return current
        }
    }
}
