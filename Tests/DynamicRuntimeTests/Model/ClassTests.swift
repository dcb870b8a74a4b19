import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ClassTests: XCTestCase {
    func testConvenienceInitRegistersAndNames() throws {
        let name = uniqueName()
        let cls = try RuntimeClass(name: name)
        XCTAssertEqual(cls.name, name)
        XCTAssertTrue(RuntimeClass.named(name) === cls)
        XCTAssertNil(cls.superclass)
        XCTAssertFalse(cls.isMetaclass)
        XCTAssertTrue(cls.metaclass.isMetaclass)
        XCTAssertEqual(cls.metaclass.name, name, "a metaclass shares its class's name")
        XCTAssertTrue(cls.metaclass.instanceClass === cls)
        XCTAssertTrue(cls.instanceClass === cls)
        XCTAssertTrue(cls.rootClass === cls)
        XCTAssertTrue(RuntimeClass.allClasses.contains(cls))
        XCTAssertEqual(cls.instanceSize, Int(sf_object_header_size()))
        XCTAssertTrue(RuntimeClass.from(cls.raw) === cls)
        XCTAssertEqual(String(cString: sf_class_getName(cls.raw)), name)
        XCTAssertTrue(sf_class_isMetaClass(cls.metaclass.raw))
        XCTAssertFalse(sf_class_isMetaClass(cls.raw))
        _ = try cls.createInstance()
    }

    func testAllocateThenRegister() throws {
        let name = uniqueName()
        let cls = try RuntimeClass.allocate(name: name)
        assertThrows(.classNotRegistered(.init(className: name, operation: "create an instance"))) { try cls.createInstance() }
        let child = uniqueName("child")
        assertThrows(.classNotRegistered(.init(className: name, operation: "subclass it"))) {
            try RuntimeClass(name: child, superclass: cls)
        }
        // The name is reserved while the pair is being built.
        assertThrows(.duplicateClass(.init(className: name))) { try RuntimeClass(name: name) }
        try cls.addIvar("count", type: .int64)
        cls.register()
        XCTAssertTrue(RuntimeClass.named(name) === cls)
        let obj = try cls.createInstance()
        XCTAssertEqual(obj.retainCount, 1)
        assertThrows(.classAlreadyRegistered(.init(className: name, operation: "add ivar 'late'"))) {
            try cls.addIvar("late", type: .int32)
        }
    }

    /// Like objc_getClass, `named` finds registered classes only; an allocated pair is not
    /// usable (it cannot make instances) and must not be handed out.
    func testNamedDoesNotReturnUnregisteredPairs() throws {
        let name = uniqueName()
        let cls = try RuntimeClass.allocate(name: name)
        XCTAssertNil(RuntimeClass.named(name))
        XCTAssertFalse(RuntimeClass.allClasses.contains(cls))
        XCTAssertNil(sf_getClass(name))
        cls.register()
        XCTAssertTrue(RuntimeClass.named(name) === cls)
    }

    func testDuplicateNamesThrow() throws {
        let name = uniqueName()
        let cls = try RuntimeClass(name: name)
        assertThrows(.duplicateClass(.init(className: name))) { try RuntimeClass(name: name) }
        assertThrows(.duplicateClass(.init(className: name))) { try RuntimeClass.allocate(name: name) }
        XCTAssertTrue(RuntimeClass.named(name) === cls, "a failed duplicate leaves the original registered")
        XCTAssertEqual(RuntimeError.duplicateClass(.init(className: name)).code, SF_ERR_DUPLICATE_CLASS)
    }

    func testBadClassNamesAndSuperclasses() throws {
        XCTAssertNotNil(thrownError { try RuntimeClass(name: "") })
        XCTAssertNotNil(thrownError { try RuntimeClass(name: "with\0nul") })
        let base = try RuntimeClass(name: uniqueName())
        let name = uniqueName("child")
        guard case .invalidArgument(let context)? = thrownError({ try RuntimeClass(name: name, superclass: base.metaclass) }) else {
            return XCTFail("a metaclass superclass must be rejected")
        }
        XCTAssertEqual(context.className, name)
        XCTAssertEqual(context.expected, "an ordinary class as superclass")
        XCTAssertEqual(context.actual, "metaclass '\(base.metaclass.name)'")
        XCTAssertNil(RuntimeClass.named(name), "a rejected class does not keep its name")
        XCTAssertNil(RuntimeClass.named(uniqueName("never")))
        assertThrows(.invalidArgument(.init(className: base.name, operation: "create an instance", expected: "a class", actual: "a metaclass"))) {
            try base.metaclass.createInstance()
        }
    }

    func testSingleInheritance() throws {
        let a = try RuntimeClass(name: uniqueName("A"))
        let b = try RuntimeClass(name: uniqueName("B"), superclass: a)
        let c = try RuntimeClass(name: uniqueName("C"), superclass: b)
        let sibling = try RuntimeClass(name: uniqueName("S"), superclass: a)
        XCTAssertTrue(c.superclass === b)
        XCTAssertTrue(c.rootClass === a)
        XCTAssertTrue(c.isSubclass(of: c))
        XCTAssertTrue(c.isSubclass(of: b))
        XCTAssertTrue(c.isSubclass(of: a))
        XCTAssertFalse(a.isSubclass(of: c))
        XCTAssertFalse(c.isSubclass(of: sibling))
        XCTAssertFalse(sibling.isSubclass(of: b))
        // Metaclasses mirror the hierarchy, and the root metaclass inherits from the root class.
        XCTAssertTrue(c.metaclass.superclass === b.metaclass)
        XCTAssertTrue(c.metaclass.isSubclass(of: a.metaclass))
        XCTAssertTrue(a.metaclass.isSubclass(of: a), "root metaclass -> root class")
        XCTAssertTrue(c.metaclass.isSubclass(of: a))
        XCTAssertTrue(c.metaclass.metaclass === a.metaclass, "every metaclass's isa is the root metaclass")
        XCTAssertEqual(sf_class_getSuperclass(c.raw), b.raw)
        XCTAssertEqual(sf_class_getSuperclass(a.metaclass.raw), a.raw)

        try a.addMethod("inherited") { (_: ObjectRef) in 1 }
        let obj = try c.createInstance()
        XCTAssertEqual(try obj.send("inherited") as Int, 1)
        XCTAssertTrue(obj.isKind(of: a))
        XCTAssertTrue(obj.isKind(of: c))
        XCTAssertFalse(obj.isKind(of: sibling))
        XCTAssertTrue(obj.runtimeClass === c)
    }

    func testRespondsToFollowsTheChain() throws {
        let base = try RuntimeClass(name: uniqueName("Base"))
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: base)
        try base.addMethod("baseOnly") { (_: ObjectRef) in }
        try sub.addMethod("subOnly") { (_: ObjectRef) in }
        try sub.metaclass.addMethod("classOnly") { (_: ObjectRef) in }
        XCTAssertTrue(sub.responds(to: "baseOnly"))
        XCTAssertTrue(sub.responds(to: "subOnly"))
        XCTAssertFalse(base.responds(to: "subOnly"))
        XCTAssertFalse(sub.responds(to: "classOnly"), "class methods are not instance methods")
        XCTAssertTrue(sub.metaclass.responds(to: "classOnly"))
        XCTAssertTrue(sub.metaclass.responds(to: "baseOnly"), "root metaclass falls back to root instance methods")
        XCTAssertFalse(sub.responds(to: "nothing"))
        let obj = try sub.createInstance()
        XCTAssertTrue(obj.responds(to: "baseOnly"))
        XCTAssertFalse(obj.responds(to: "classOnly"))
        XCTAssertTrue(sub.responds(to: "classOnly") == false && sub.receiver.responds(to: "classOnly"),
                      "the class object (receiver) answers class methods")
        XCTAssertTrue(sf_class_respondsToSelector(sub.raw, Selector("subOnly").raw))
        XCTAssertFalse(sf_class_respondsToSelector(nil, Selector("subOnly").raw))
        XCTAssertFalse(ObjectRef.nil.responds(to: "baseOnly"))
    }

    func testMethodListHoldsOwnMethodsSorted() throws {
        let base = try RuntimeClass(name: uniqueName("Base"))
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: base)
        try base.addMethod("zeta") { (_: ObjectRef) in }
        try sub.addMethod("beta") { (_: ObjectRef, x: Int) in x }
        try sub.addMethod("alpha:", implementation: IMP(unsafeBitCast(returnSeven, to: sf_imp.self)), types: "q@:q")
        XCTAssertEqual(sub.methodList.map(\.selector.name), ["alpha:", "beta"])
        XCTAssertEqual(sub.methodList.map(\.signature.encoding), ["q@:q", "q@:q"])
        XCTAssertTrue(sub.methodList.allSatisfy { $0.owningClass === sub })
        XCTAssertEqual(base.methodList.map(\.selector.name), ["zeta"])
        XCTAssertTrue(sub.method(for: "zeta")?.owningClass === base)
        XCTAssertNil(sub.ownMethod(for: "zeta"))
        XCTAssertEqual(sub.ownMethod(for: "alpha:")?.description, "-[\(sub.name) alpha:] q@:q")
        XCTAssertTrue(sub.metaclass.methodList.isEmpty)
    }

    func testIvarsAreLaidOutAlignedAndInherited() throws {
        let base = try RuntimeClass(name: uniqueName("Base"), ivars: [("flag", .bool), ("count", .int64), ("small", .int16)])
        let header = Int(sf_object_header_size())
        XCTAssertEqual(base.ivars.map(\.name), ["flag", "count", "small"])
        let flag = try XCTUnwrap(base.ivar(named: "flag"))
        let count = try XCTUnwrap(base.ivar(named: "count"))
        let small = try XCTUnwrap(base.ivar(named: "small"))
        XCTAssertEqual(flag.offset, header)
        XCTAssertEqual(flag.size, 1)
        XCTAssertEqual(count.offset, header + 8, "an Int64 is 8-aligned")
        XCTAssertEqual(small.offset, header + 16)
        XCTAssertEqual(base.instanceSize, header + 18)

        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: base, ivars: [("point", Point.typeEncoding)])
        let point = try XCTUnwrap(sub.ivar(named: "point"))
        XCTAssertEqual(point.offset, header + 24)
        XCTAssertEqual(point.size, 16)
        XCTAssertEqual(sub.ivars.map(\.name), ["point"], "ivars lists the class's own")
        XCTAssertEqual(sub.ivar(named: "count"), count, "lookup searches superclasses")
        XCTAssertNil(base.ivar(named: "point"))
        XCTAssertEqual(sf_class_getIvarOffset(sub.raw, "count"), count.offset)
        XCTAssertEqual(sf_class_getIvarOffset(sub.raw, "missing"), -1)

        // Instances start zeroed and ivars are writable where the offsets say.
        let obj = try sub.createInstance()
        let p = try XCTUnwrap(sf_object_getIvarPointer(obj.raw, point.offset))
        XCTAssertEqual(p.load(as: Point.self), Point(x: 0, y: 0))
        p.storeBytes(of: Point(x: 1, y: 2), as: Point.self)
        XCTAssertEqual(sf_object_getIvarPointer(obj.raw, point.offset)!.load(as: Point.self), Point(x: 1, y: 2))
        XCTAssertNil(sf_object_getIvarPointer(obj.raw, 0), "the header is not an ivar")
        XCTAssertNil(sf_object_getIvarPointer(obj.raw, -1))
    }

    func testBadIvars() throws {
        let name = uniqueName()
        let cls = try RuntimeClass.allocate(name: name)
        try cls.addIvar("x", type: .int32)
        XCTAssertNotNil(thrownError { try cls.addIvar("x", type: .double) }, "duplicate ivar name")
        XCTAssertNotNil(thrownError { try cls.addIvar("v", type: .void) }, "void ivar")
        XCTAssertNotNil(thrownError { try cls.metaclass.addIvar("m", type: .int32) }, "metaclass ivar")
        XCTAssertNotNil(thrownError { try cls.addIvar("s", type: .structure(name: "E", fields: [])) }, "empty struct ivar")
        cls.register()
        let sub = try RuntimeClass.allocate(name: uniqueName("Sub"), superclass: cls)
        XCTAssertNotNil(thrownError { try sub.addIvar("x", type: .int8) }, "names are unique along the chain")
        sub.register()
        assertThrows(.classAlreadyRegistered(.init(className: sub.name, operation: "add ivar 'y'"))) { try sub.addIvar("y", type: .int8) }
        XCTAssertEqual(cls.ivars.count, 1)
    }

    /// Strong object ivars are released when their owner is deallocated.
    func testObjectIvarsAreReleasedOnDealloc() throws {
        let holder = try RuntimeClass(name: uniqueName("Holder"), ivars: [("child", .object)])
        let leaf = try RuntimeClass(name: uniqueName("Leaf"))
        let offset = try XCTUnwrap(holder.ivar(named: "child")).offset
        nonisolated(unsafe) var log: [String] = []
        do {
            let owner = try holder.createInstance()
            let child = try leaf.createInstance()
            child.onDeallocate { _ in log.append("child") }
            owner.onDeallocate { _ in log.append("owner") }
            sf_object_getIvarPointer(owner.raw, offset)!.storeBytes(of: sf_retain(child.raw), as: sf_id?.self)
            XCTAssertEqual(child.retainCount, 2)
        }
        XCTAssertEqual(log, ["owner", "child"], "observers see the ivar intact; the ivar goes after")
    }

    func testAssociatedValuesOnAnyObject() throws {
        let cls = try RuntimeClass(name: uniqueName())
        let key = AssociationKey("tag")
        let other = AssociationKey("other")
        let obj = try cls.createInstance()
        for receiver in [obj.ref, cls.receiver, cls.metaclass.receiver] {
            XCTAssertNil(receiver.associatedValue(for: key))
            receiver.setAssociatedValue("hello", for: key)
            receiver.setAssociatedValue(42, for: other)
            XCTAssertEqual(receiver.associatedValue(for: key) as? String, "hello")
            XCTAssertEqual(receiver.associatedValue(for: other) as? Int, 42)
            receiver.setAssociatedValue([1, 2], for: key)
            XCTAssertEqual(receiver.associatedValue(for: key) as? [Int], [1, 2], "setting again replaces")
            receiver.setAssociatedValue(nil, for: key)
            XCTAssertNil(receiver.associatedValue(for: key))
            receiver.setAssociatedValue(nil, for: other)
        }
        XCTAssertNil(AssociationKey("tag") == key ? 1 : nil, "keys compare by identity, not label")
        ObjectRef.nil.setAssociatedValue(1, for: key)
        XCTAssertNil(ObjectRef.nil.associatedValue(for: key))
    }

    func testDisposeRules() throws {
        let base = try RuntimeClass(name: uniqueName("Base"))
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: base)
        guard case .classInUse(let context)? = thrownError({ try base.dispose() }) else { return XCTFail() }
        XCTAssertEqual(context.className, base.name)
        let reason = try XCTUnwrap(context.reason)
        XCTAssertTrue(reason.contains(sub.name), reason)
        var obj: Object? = try sub.createInstance()
        guard case .classInUse(let c2)? = thrownError({ try sub.dispose() }) else { return XCTFail() }
        XCTAssertEqual(c2.reason, "1 instance(s) still alive")
        XCTAssertNotNil(thrownError { try sub.metaclass.dispose() })
        obj = nil
        _ = obj
        try sub.dispose()
        XCTAssertNil(RuntimeClass.named(sub.name))
        try base.dispose()
        XCTAssertNil(RuntimeClass.named(base.name))
        // The name is free again.
        let again = try RuntimeClass(name: base.name)
        XCTAssertTrue(RuntimeClass.named(base.name) === again)
    }
}

private let returnSeven: @convention(c) (sf_id?, sf_sel?, Int) -> Int = { _, _, _ in 7 }
