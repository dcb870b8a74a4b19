import CDynamicRuntime
import Glibc

/// Allocation and deallocation of instances.
enum ObjectLifecycle {
    /// `extraBytes` follow the ivars, at `cls.indexedIvarsOffset` (class_createInstance).
    static func allocate(_ cls: RuntimeClass, extraBytes: Int = 0) -> sf_id {
        let size = extraBytes == 0 ? cls.instanceSize : cls.indexedIvarsOffset + extraBytes
        let memory: UnsafeMutableRawPointer
        let alignment = cls.instanceAlignment
        if alignment > 16 {
            // An ivar asked for more than malloc guarantees; free() releases either kind.
            var p: UnsafeMutableRawPointer?
            guard posix_memalign(&p, alignment, size) == 0, let p else { fatalError("out of memory") }
            memset(p, 0, size)
            memory = p
        } else {
            memory = calloc(1, size)!
        }
        let obj = memory.assumingMemoryBound(to: sf_object.self)
        sf_object_init_header(obj, cls.raw, 0)
        sf_class_adjust_live_instances(cls.raw, 1)
        sf_counter_objects_add(1)
        return obj
    }

    /// Whether the object's final release has begun deallocating it.
    static func isDeallocating(_ obj: sf_id) -> Bool {
        sf_object_flags(obj) & UInt32(SF_OBJ_DEALLOCATING) != 0
    }

    /// Runs once, when the last strong reference goes (retains and releases are inert from
    /// here on, and weak references read nil). In order: the dealloc observers, with the
    /// object intact (RxCocoa's `deallocating`: before `dealloc` runs); the class's `dealloc`
    /// chain (overrides and hooks, each calling super), which ends in the root `dealloc`
    /// (`destruct`); then the memory is freed, after the whole chain returned, so that code
    /// after `[super dealloc]` (an after-hook) still finds the header.
    static func deallocate(_ obj: sf_id) {
        sf_object_set_flags(obj, UInt32(SF_OBJ_DEALLOCATING))
        // Held to the end: code that runs below (an ivar's dealloc observer) may still look the
        // table up through the object. A reference of our own: a hook removed meanwhile may
        // drop the object's.
        let table = ObjectSideTable.of(obj, create: false)
        defer { withExtendedLifetime(table) {} }
        table?.runDeallocObservers(ObjectRef(obj))
        RootDealloc.runChain(obj)
        // The isa as `destruct` left it: the visible class.
        let cls = sf_object_isa(obj)!
        sf_class_adjust_live_instances(cls, -1)
        sf_counter_objects_add(-1)
        free(obj)
    }

    /// objc4's `object_dispose`: destroys `obj` now, whatever its count, as a last release
    /// would but without sending `dealloc`: the dealloc observers, then `destruct`, then the
    /// free. References still held elsewhere dangle; that is the caller's to rule out.
    ///
    /// - Throws: `invalidArgument` for a class object, or an object already being deallocated
    ///   or disposed (from one of its dealloc observers, say).
    static func dispose(_ obj: sf_id) throws(RuntimeError) {
        if sf_object_isTagged(obj) { throw .taggedObject(obj, "dispose an object", because: "which is a value, never allocated") }
        let isa = sf_object_isa(obj)!
        if sf_class_info(isa) & UInt32(SF_CLASS_META) != 0 {
            throw .invalidArgument(.init(className: String(cString: sf_class_getName(isa)), operation: "dispose an object",
                                         expected: "an instance", actual: "a class object"))
        }
        // From here on retains and releases are inert; of two disposals, one wins.
        if sf_object_test_and_set_flags(obj, UInt32(SF_OBJ_DEALLOCATING)) & UInt32(SF_OBJ_DEALLOCATING) != 0 {
            throw .invalidArgument(.init(className: RuntimeClass.from(sf_object_getClass(obj)!).name, operation: "dispose an object",
                                         expected: "a live instance", actual: "an object already being deallocated"))
        }
        let table = ObjectSideTable.of(obj, create: false)
        defer { withExtendedLifetime(table) {} }
        table?.runDeallocObservers(ObjectRef(obj))
        destruct(obj)
        let cls = sf_object_isa(obj)!
        sf_class_adjust_live_instances(cls, -1)
        sf_counter_objects_add(-1)
        free(obj)
    }

    /// The root `dealloc`'s work, objc4's `objc_destructInstance`: strong ivars released (the
    /// ivar destructors), associations removed, weak references cleared, the object's hooks
    /// and side table dropped. Everything but the free; runs once per object. Later teardown
    /// steps belong here, in this order.
    static func destruct(_ obj: sf_id) {
        // Resolve the visible class first: tearing down a hidden class may free it.
        let isa = sf_object_isa(obj)!
        let cls = RuntimeClass.from(sf_object_getClass(obj)!)
        // Weak ivars: their slots are in this memory, so the table lets go of them first.
        WeakTable.shared.destroyWeakIvars(of: obj, offsets: cls.weakIvarOffsets)
        for offset in cls.objectIvarOffsets {
            let slot = (UnsafeMutableRawPointer(obj) + offset).assumingMemoryBound(to: sf_id?.self)
            if let value = slot.pointee {
                slot.pointee = nil
                sf_release_inline(value)
            }
        }
        let table = ObjectSideTable.of(obj, create: false)
        table?.releaseAssociations()
        if sf_object_flags(obj) & UInt32(SF_OBJ_HAS_WEAK) != 0 {
            WeakTable.shared.clear(obj)
        }
        // No hidden class can be made from here on.
        if sf_class_info(isa) & UInt32(SF_CLASS_HIDDEN) != 0 {
            sf_object_set_isa(obj, cls.raw)
            HiddenClassRegistry.objectDeallocated(obj, hiddenClass: RuntimeClass.from(isa))
        }
        // The object's reference to its table goes last; a table first made during deallocation
        // (only lookups and removals get that far) takes its associations with it.
        if let left = sf_object_take_side(obj) {
            let last = ObjectWord<ObjectSideTable>(left).take()
            if last !== table { last.releaseAssociations() }
        }
        withExtendedLifetime(table) {}
    }
}
