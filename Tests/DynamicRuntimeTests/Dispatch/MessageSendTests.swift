import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

private let hello: StaticString = "hello, runtime"
private var helloPointer: UnsafePointer<CChar> { UnsafeRawPointer(hello.utf8Start).assumingMemoryBound(to: CChar.self) }

/// C functions with narrow and floating-point types, called without a Swift closure in between.
private let cWidenInt8: @convention(c) (sf_id?, sf_sel?, Int8) -> Int = { _, _, v in Int(v) }
private let cNegInt8: @convention(c) (sf_id?, sf_sel?, Int8) -> Int8 = { _, _, v in 0 &- v }
private let cMixed: @convention(c) (sf_id?, sf_sel?, Double, Int8, Float, Bool) -> Double = { _, _, a, b, c, d in
    a + Double(b) + Double(c) + (d ? 1000 : 0)
}

final class MessageSendTests: ClassInstanceTestCase {
    /// Installs `echo:` for `T` and checks the value survives a typed and a dynamic round trip.
    private func roundTrip<T: MessageValue & Equatable>(_ value: T, file: StaticString = #filePath, line: UInt = #line,
                                                       dynamic check: (DynamicValue) -> T?) throws {
        let sel = Selector("echo\(T.self):")
        _ = try cls.replaceMethod(sel) { (_: ObjectRef, v: T) -> T in v }
        let typed: T = try obj.send(sel, value)
        XCTAssertEqual(typed, value, "typed \(T.self)", file: file, line: line)
        let dyn = try obj.send(sel, value as any MessageArgument)
        XCTAssertEqual(check(dyn), value, "dynamic \(T.self): \(dyn)", file: file, line: line)
        XCTAssertTrue(dyn.typeEncoding.isCompatible(with: T.typeEncoding), "\(dyn.typeEncoding)", file: file, line: line)
    }

    // MARK: - Every type, typed and dynamic

    func testIntegersRoundTripThroughBothPaths() throws {
        for v: Int8 in [-128, -5, -1, 0, 1, 127] { try roundTrip(v) { if case let .int8(x) = $0 { x } else { nil } } }
        for v: UInt8 in [0, 1, 200, 255] { try roundTrip(v) { if case let .uint8(x) = $0 { x } else { nil } } }
        for v: Int16 in [.min, -300, -1, 0, .max] { try roundTrip(v) { if case let .int16(x) = $0 { x } else { nil } } }
        for v: UInt16 in [0, 40000, .max] { try roundTrip(v) { if case let .uint16(x) = $0 { x } else { nil } } }
        for v: Int32 in [.min, -70000, -1, 0, .max] { try roundTrip(v) { if case let .int32(x) = $0 { x } else { nil } } }
        for v: UInt32 in [0, 3_000_000_000, .max] { try roundTrip(v) { if case let .uint32(x) = $0 { x } else { nil } } }
        for v: Int in [.min, -1, 0, 1, .max] { try roundTrip(v) { if case let .int64(x) = $0 { Int(x) } else { nil } } }
        for v: Int64 in [.min, .max] { try roundTrip(v) { if case let .int64(x) = $0 { x } else { nil } } }
        for v: UInt in [0, .max] { try roundTrip(v) { if case let .uint64(x) = $0 { UInt(x) } else { nil } } }
        for v: UInt64 in [0, .max, 1 << 63] { try roundTrip(v) { if case let .uint64(x) = $0 { x } else { nil } } }
    }

    func testFloatingPointAndBoolRoundTrip() throws {
        for v: Float in [0, -1.5, .pi, .greatestFiniteMagnitude, -.infinity] {
            try roundTrip(v) { if case let .float(x) = $0 { x } else { nil } }
        }
        for v: Double in [0, -2.25, .pi, .leastNonzeroMagnitude, .infinity] {
            try roundTrip(v) { if case let .double(x) = $0 { x } else { nil } }
        }
        for v in [true, false] { try roundTrip(v) { if case let .bool(x) = $0 { x } else { nil } } }
        let nan: Float = try { _ = try cls.replaceMethod("echoFloat:") { (_: ObjectRef, v: Float) in v }; return try obj.send("echoFloat:", Float.nan) }()
        XCTAssertTrue(nan.isNaN)
    }

    func testPointersSelectorsClassesAndCStrings() throws {
        let sel = Selector("someSelector:")
        try roundTrip(sel) { if case let .selector(s) = $0 { s } else { nil } }
        try roundTrip(ClassRef(cls)) { if case let .classObject(c) = $0 { c } else { nil } }
        try roundTrip(ClassRef(nil)) { if case let .classObject(c) = $0 { c } else { nil } }
        try roundTrip(ClassRef(cls.metaclass)) { if case let .classObject(c) = $0 { c } else { nil } }
        try roundTrip(CString(helloPointer)) { if case let .cString(c) = $0 { c } else { nil } }
        try roundTrip(CString(nil)) { if case let .cString(c) = $0 { c } else { nil } }
        let p = UnsafeRawPointer(bitPattern: 0x1234_5678)!
        try roundTrip(p) { if case let .pointer(x) = $0 { x } else { nil } }

        try cls.addMethod("length:") { (_: ObjectRef, s: CString) in s.string?.utf8.count ?? -1 }
        XCTAssertEqual(try obj.send("length:", CString(helloPointer)) as Int, 14)
        XCTAssertEqual(try obj.send("length:", CString(nil)) as Int, -1)
        try cls.addMethod("greeting") { (_: ObjectRef) in CString(helloPointer) }
        XCTAssertEqual((try obj.send("greeting") as CString).string, "hello, runtime")
        XCTAssertEqual(try obj.send("greeting").description, "\"hello, runtime\"")
        XCTAssertEqual(ClassRef(cls).runtimeClass, cls)
        XCTAssertEqual(DynamicValue.classObject(ClassRef(cls)).description, cls.name)
    }

    func testStructsByValue() throws {
        try roundTrip(Point(x: 1.5, y: -2)) { $0.structValue() }
        try roundTrip(Pair32(a: -1, b: 7)) { $0.structValue() }
        try roundTrip(Quad(a: 1, b: -2, c: 3, d: .max)) { $0.structValue() }
        try roundTrip(Rect(origin: Point(x: 1, y: 2), size: Point(x: 3, y: 4))) { $0.structValue() }

        // C functions taking structs by value are in CInteropTests (Swift structs are not C types).
        try cls.addMethod("scale:by:", types: "{Point=dd}@:{Point=dd}d") { (_: ObjectRef, p: Point, k: Double) in Point(x: p.x * k, y: p.y * k) }
        XCTAssertEqual(try obj.send("scale:by:", Point(x: 1, y: 2), 3.0) as Point, Point(x: 3, y: 6))
        let dyn = try obj.send("scale:by:", Point(x: 1, y: 2), 0.5)
        XCTAssertEqual(dyn.structValue(as: Point.self), Point(x: 0.5, y: 1))
        XCTAssertNil(dyn.structValue(as: Quad.self), "a struct of another size does not convert")
        // A DynamicValue holding the struct's bytes works as an argument too.
        let again = try obj.send("scale:by:", dyn, 2.0)
        XCTAssertEqual(again.structValue(as: Point.self), Point(x: 1, y: 2))

        try cls.addMethod("reverse:", types: "{Quad=qqqq}@:{Quad=qqqq}") { (_: ObjectRef, q: Quad) in Quad(a: q.d, b: q.c, c: q.b, d: q.a) }
        XCTAssertEqual(try obj.send("reverse:", Quad(a: 1, b: 2, c: 3, d: 4)) as Quad, Quad(a: 4, b: 3, c: 2, d: 1))
        XCTAssertEqual(try obj.send("reverse:", Quad(a: 1, b: 2, c: 3, d: 4)).structValue(as: Quad.self), Quad(a: 4, b: 3, c: 2, d: 1))
    }

    func testInt8IsSignExtendedForTheCallee() throws {
        try cls.addMethod("widen:", implementation: imp(cWidenInt8), types: "q@:c")
        try cls.addMethod("neg:", implementation: imp(cNegInt8), types: "c@:c")
        try cls.addMethod("widenClosure:") { (_: ObjectRef, v: Int8) in Int(v) }
        for v: Int8 in [-128, -1, 0, 1, 127] {
            XCTAssertEqual(try obj.send("widen:", v) as Int, Int(v))
            XCTAssertEqual(try obj.send("widen:", v).intValue, Int(v))
            XCTAssertEqual(try obj.send("widenClosure:", v) as Int, Int(v))
            XCTAssertEqual(try obj.send("widenClosure:", v).intValue, Int(v))
            XCTAssertEqual(try obj.send("neg:", v) as Int8, 0 &- v)
            XCTAssertEqual(try obj.send("neg:", v).intValue, Int(0 &- v))
        }
    }

    func testMixedFloatAndIntegerArguments() throws {
        try cls.addMethod("mixed::::", implementation: imp(cMixed), types: "d@:dcfB")
        XCTAssertEqual(try obj.send("mixed::::", 0.5, Int8(-3), Float(2.25), true) as Double, 999.75)
        XCTAssertEqual(try obj.send("mixed::::", 0.5, Int8(-3), Float(2.25), false).doubleValue, -0.25)
        try cls.addMethod("floatOf:") { (_: ObjectRef, v: Int) in Float(v) / 4 }
        XCTAssertEqual(try obj.send("floatOf:", 3) as Float, 0.75, "float return on the direct path")
        try cls.addMethod("isEven:") { (_: ObjectRef, v: Int) in v % 2 == 0 }
        XCTAssertEqual(try obj.send("isEven:", 4) as Bool, true)
        XCTAssertEqual(try obj.send("isEven:", 5) as Bool, false)
        try cls.addMethod("mix4::::") { (_: ObjectRef, a: Float, b: UInt8, c: Double, d: Int16) in Double(a) + Double(b) + c + Double(d) }
        XCTAssertEqual(try obj.send("mix4::::", Float(1), UInt8(255), 0.5, Int16(-256)) as Double, 0.5)
        XCTAssertEqual(try obj.send("mix4::::", Float(1), UInt8(255), 0.5, Int16(-256)).doubleValue, 0.5)
    }

    /// A dynamic send of register arguments calls the IMP directly; `Method.invoke` always goes
    /// through a libffi frame. Both must give the same values, hooks and errors.
    func testDynamicRegisterSendsAgreeWithTheFramePath() throws {
        try cls.addMethod("neg:", implementation: imp(cNegInt8), types: "c@:c")
        try cls.addMethod("sum:::::") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int, e: Int) -> Int in
            let low = a + 10 * b + 100 * c
            return low + 1000 * d + 10000 * e
        }
        try cls.addMethod("half:") { (_: ObjectRef, v: Int) in Double(v) / 2 }
        try cls.addMethod("third:") { (_: ObjectRef, v: UInt16) in Float(v) / 3 }
        try cls.addMethod("pick:or:") { (_: ObjectRef, flag: Bool, s: Selector) -> Selector in flag ? s : Selector("other") }
        try cls.addMethod("fail:") { (_: ObjectRef, v: Int) throws -> Int in
            if v < 0 { throw RuntimeError.invalidArgument(.init(className: "X", selector: "fail:", expected: "v >= 0", actual: "\(v)")) }
            return v
        }
        func both(_ sel: Selector, _ args: [any MessageArgument]) throws -> (DynamicValue, DynamicValue) {
            let direct = try obj.send(sel, arguments: args)
            let method = try XCTUnwrap(cls.method(for: sel))
            return (direct, try method.invoke(on: obj, arguments: args))
        }
        for v: Int8 in [-128, -1, 0, 5, 127] {
            let (d, f) = try both("neg:", [v])
            XCTAssertEqual(d.description, f.description)
            if case let .int8(x) = d { XCTAssertEqual(x, 0 &- v) } else { XCTFail("\(d)") }
        }
        let (s5, f5) = try both("sum:::::", [1, 2, 3, 4, 5])
        XCTAssertEqual(s5.intValue, 54321)
        XCTAssertEqual(f5.intValue, 54321)
        let (h, fh) = try both("half:", [7])
        XCTAssertEqual(h.doubleValue, 3.5)
        XCTAssertEqual(fh.doubleValue, 3.5)
        let (t, ft) = try both("third:", [UInt16(7)])
        if case let .float(x) = t, case let .float(y) = ft { XCTAssertEqual(x, y); XCTAssertEqual(x, Float(7) / 3) } else { XCTFail("\(t) \(ft)") }
        let (p, fp) = try both("pick:or:", [true, Selector("chosen")])
        XCTAssertEqual(p.description, "@selector(chosen)")
        XCTAssertEqual(p.description, fp.description)
        XCTAssertEqual(try obj.send("pick:or:", false, Selector("chosen")).description, "@selector(other)")

        // A closure's error names the receiver's class on both paths.
        let direct = thrownError { try obj.send("fail:", -1) }
        let method = try XCTUnwrap(cls.method(for: "fail:"))
        let framed = thrownError { try method.invoke(on: obj, -1) }
        XCTAssertNotNil(direct)
        XCTAssertEqual(direct, framed)
        XCTAssertEqual(try obj.send("fail:", 3).intValue, 3)

        // A hooked method runs its hook when sent dynamically, and the hook's return wins.
        let token = try cls.hook("half:", .instead) { ctx in
            try ctx.proceed()
            try ctx.setReturnValue(try ctx.returnValue(as: Double.self) + 100)
        }
        XCTAssertEqual(try obj.send("half:", 7).doubleValue, 103.5)
        XCTAssertTrue(token.remove())
        XCTAssertEqual(try obj.send("half:", 7).doubleValue, 3.5)

        // `DynamicValue` arguments take the register path by the value they hold.
        let (dv, fdv) = try both("neg:", [DynamicValue.int8(-7)])
        XCTAssertEqual(dv.description, "7")
        XCTAssertEqual(dv.description, fdv.description)
        XCTAssertEqual(thrownError { try obj.send("neg:", DynamicValue.int32(7)) }?.context.argument, 1)
        let other = try cls.createInstance()
        try cls.addMethod("same:") { (_: ObjectRef, o: ObjectRef) -> Object? in o.retained() }
        do {
            let back = try obj.send("same:", DynamicValue.object(other))
            XCTAssertEqual(back.objectValue, other)
            XCTAssertEqual(other.retainCount, 2, "the argument is borrowed, the return owned")
        }
        XCTAssertEqual(other.retainCount, 1)
        XCTAssertNotNil(thrownError { try obj.send("pick:or:", true, DynamicValue.selector(nil)) },
                        "a NULL selector goes through the checked path, which refuses it")

        // Types the register path does not take still meet the checks of the frame path.
        XCTAssertEqual(thrownError { try obj.send("half:", Int32(7)) }?.context.argument, 1)
        XCTAssertEqual(thrownError { try obj.send("half:", 7, 8) }?.actual, "2")
        XCTAssertEqual(try obj.send("half:", DynamicValue.int64(9)).doubleValue, 4.5)
    }

    // MARK: - Objects and ownership

    func testObjectArgumentsAreBorrowedAndReturnsAreOwned() throws {
        let other = try cls.createInstance()
        try cls.addMethod("same:") { (_: ObjectRef, o: ObjectRef) -> Object? in o.retained() }
        try cls.addMethod("isNil:") { (_: ObjectRef, o: Object?) in o == nil }
        let cls = self.cls!
        try cls.addMethod("make") { (_: ObjectRef) -> Object? in try? cls.createInstance() }
        let before = Runtime.liveObjectCount
        do {
            let back: Object? = try obj.send("same:", other.ref)
            XCTAssertEqual(back, other)
            XCTAssertEqual(other.retainCount, 2, "the return is +1, owned by `back`")
        }
        XCTAssertEqual(other.retainCount, 1)
        do {
            let dyn = try obj.send("same:", other)
            XCTAssertEqual(dyn.objectValue, other)
            XCTAssertEqual(other.retainCount, 2)
        }
        XCTAssertEqual(other.retainCount, 1)
        XCTAssertEqual(try obj.send("isNil:", Object?.none) as Bool, true)
        XCTAssertEqual(try obj.send("isNil:", other as Object?) as Bool, false)
        XCTAssertEqual(try obj.send("isNil:", ObjectRef.nil) as Bool, true)
        XCTAssertEqual(try obj.send("isNil:", Object?.none as any MessageArgument).intValue, 1)
        let nilBack: Object? = try obj.send("same:", ObjectRef.nil)
        XCTAssertNil(nilBack)
        if case .object(nil) = try obj.send("same:", ObjectRef.nil) {} else { XCTFail("nil object return") }

        do {
            let made: Object? = try obj.send("make")
            XCTAssertEqual(made?.retainCount, 1)
            let dynMade = try obj.send("make").objectValue
            XCTAssertEqual(dynMade?.retainCount, 1)
            XCTAssertEqual(Runtime.liveObjectCount, before + 2)
        }
        // A caller that asks for Void drops the +1 object instead of leaking it.
        try obj.send("make", as: Void.self)
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    // MARK: - Errors

    func testDynamicSendChecksArgumentCountAndTypes() throws {
        try cls.addMethod("add:to:", implementation: imp(cAddInts), types: "q@:qq")
        let count = thrownError { try obj.send("add:to:", 1) }
        XCTAssertEqual(count, .invalidArgument(.init(className: cls.name, selector: "add:to:",
                                                     expected: "2 argument(s) for 'q@:qq'", actual: "1")))
        XCTAssertEqual(count?.description, "-[\(cls.name) add:to:]: expected 2 argument(s) for 'q@:qq', got 1")
        XCTAssertEqual(thrownError { try obj.send("add:to:", 1, 2, 3) }?.actual, "3")
        let r3 = thrownError { try obj.send("add:to:", 1, 2.0) }
        XCTAssertEqual(r3, .invalidArgument(.init(className: cls.name, selector: "add:to:", argument: 2,
                                                  expected: "'q'", actual: "'d' (Double)")))
        XCTAssertEqual(thrownError { try obj.send("add:to:", Int32(1), 2) }?.context.argument, 1)
        let r5 = thrownError { try obj.send("add:to:", arguments: [1, CString(nil)]) }
        XCTAssertEqual(r5?.context.argument, 2)
        XCTAssertEqual(r5?.actual, "'*' (CString)")

        try cls.addMethod("scale:by:") { (_: ObjectRef, p: Point, k: Double) in Point(x: p.x * k, y: p.y * k) }
        guard case .invalidArgument(let r6)? = thrownError({ try obj.send("scale:by:", Pair32(a: 1, b: 2), 1.0) }) else {
            return XCTFail("a struct of another layout is rejected")
        }
        XCTAssertEqual(r6.argument, 1)
        let wrongBytes = DynamicValue.structure(Point.typeEncoding, [1, 2, 3])
        guard case .invalidArgument(let r7)? = thrownError({ try obj.send("scale:by:", wrongBytes, 1.0) }) else {
            return XCTFail("a struct value with the wrong byte count is rejected")
        }
        XCTAssertEqual(r7.operation, "argument 1")
        XCTAssertEqual(r7.expected, "a 16-byte struct '\(Point.typeEncoding.encoding)'")
        XCTAssertEqual(r7.actual, "3 bytes")
        XCTAssertEqual(try obj.send("add:to:", DynamicValue.int64(2), DynamicValue.int64(3)).intValue, 5)
    }

    func testTypedSendChecksTheSignature() throws {
        try cls.addMethod("add:to:", implementation: imp(cAddInts), types: "q@:qq")
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "add:to:", expected: "q@:qq", actual: "q@:qd"))) {
            try obj.send("add:to:", 1, 2.0) as Int
        }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "add:to:", expected: "q@:qq", actual: "d@:qq"))) {
            try obj.send("add:to:", 1, 2) as Double
        }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "add:to:", expected: "q@:qq", actual: "q@:q"))) {
            try obj.send("add:to:", 1) as Int
        }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "add:to:", expected: "q@:qq", actual: "q@:iq"))) {
            try obj.send("add:to:", Int32(1), 2) as Int
        }
        try cls.addMethod("nothing") { (_: ObjectRef) in }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "nothing", expected: "v@:", actual: "q@:"))) {
            try obj.send("nothing") as Int
        }
        // Discarding a value is allowed: `as: Void.self` on a method that returns one.
        try obj.send("add:to:", 1, 2, as: Void.self)
    }

    func testUnknownSelectorsThrowNamingClassAndSelector() throws {
        let expected = RuntimeError.doesNotRecognizeSelector(.init(className: cls.name, selector: "missing:", isClassMethod: false))
        assertThrows(expected) { try obj.send("missing:", 1) as Int }
        assertThrows(expected) { try obj.send("missing:", 1, as: Void.self) }
        assertThrows(expected) { try obj.send("missing:", 1) }
        assertThrows(expected) { try obj.send("missing:", 1.5) as Double }
        XCTAssertEqual(expected.description, "-[\(cls.name) missing:]: unrecognized selector sent to instance")
        XCTAssertEqual(expected.code, SF_ERR_UNRECOGNIZED_SELECTOR)
        let classMiss = RuntimeError.doesNotRecognizeSelector(.init(className: cls.name, selector: "make", isClassMethod: true))
        assertThrows(classMiss) { try cls.send("make") as Int }
        assertThrows(classMiss) { try cls.send("make") }
        XCTAssertEqual(classMiss.description, "+[\(cls.name) make]: unrecognized selector sent to class")
    }

    // MARK: - Nil receivers

    func testMessagesToNilReturnZero() throws {
        let none = ObjectRef.nil
        XCTAssertEqual(try none.send("anything") as Int, 0)
        XCTAssertEqual(try none.send("anything:", 5) as Int8, 0)
        XCTAssertEqual(try none.send("anything", as: Double.self), 0)
        XCTAssertEqual(try none.send("anything", as: Float.self), 0)
        XCTAssertEqual(try none.send("anything", as: Bool.self), false)
        XCTAssertEqual(try none.send("anything", as: Point.self), Point(x: 0, y: 0))
        XCTAssertEqual(try none.send("anything", as: Quad.self), Quad(a: 0, b: 0, c: 0, d: 0))
        XCTAssertNil(try none.send("anything") as Object?)
        XCTAssertNil((try none.send("anything") as CString).pointer)
        try none.send("anything", 1, 2, 3, 4, as: Void.self)
        if case .void = try none.send("anything", 1) {} else { XCTFail("dynamic send to nil returns .void") }
        XCTAssertFalse(none.responds(to: "anything"))
        XCTAssertNil(none.runtimeClass)
        XCTAssertEqual(none.retainCount, 0)
    }

    // MARK: - Class methods and super

    func testClassMethodsAndRootMetaclassFallback() throws {
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: cls)
        try cls.addMethod("rootInstance") { (self_: ObjectRef) in Int(bitPattern: UInt(bitPattern: self_.raw)) }
        try cls.metaclass.addMethod("classValue") { (_: ObjectRef) in 5 }
        try sub.metaclass.addMethod("subClassValue:") { (_: ObjectRef, v: Double) in v * 2 }
        XCTAssertEqual(try cls.send("classValue") as Int, 5)
        XCTAssertEqual(try sub.send("classValue") as Int, 5, "class methods are inherited")
        XCTAssertEqual(try sub.send("subClassValue:", 1.25) as Double, 2.5)
        XCTAssertEqual(try sub.send("subClassValue:", 1.25).doubleValue, 2.5)
        assertThrows(.doesNotRecognizeSelector(.init(className: cls.name, selector: "subClassValue:", isClassMethod: true))) {
            try cls.send("subClassValue:", 1.0) as Double
        }
        // The root metaclass inherits from the root class: root instance methods answer class
        // messages, with the class object as the receiver.
        let classObject = Int(bitPattern: UInt(bitPattern: sub.receiver.raw))
        XCTAssertEqual(try sub.send("rootInstance") as Int, classObject)
        XCTAssertEqual(try sub.send("rootInstance").intValue, classObject)
        XCTAssertTrue(sub.receiver.responds(to: "rootInstance"))
        XCTAssertTrue(sub.receiver.isKind(of: cls), "a class object is a kind of its root class")
        // A class method of the same name wins over the root instance method.
        try sub.metaclass.addMethod("rootInstance") { (_: ObjectRef) in -1 }
        XCTAssertEqual(try sub.send("rootInstance") as Int, -1)
        XCTAssertEqual(try cls.send("rootInstance") as Int, Int(bitPattern: UInt(bitPattern: cls.receiver.raw)))
    }

    func testSuperSendsStartAtTheSuperclass() throws {
        let a = try RuntimeClass(name: uniqueName("A"))
        let b = try RuntimeClass(name: uniqueName("B"), superclass: a)
        let c = try RuntimeClass(name: uniqueName("C"), superclass: b)
        try a.addMethod("describe") { (_: ObjectRef) in 1 }
        // A depth guard turns a super send that re-dispatches to the subclass (endless
        // recursion) into a wrong answer instead of a stack overflow.
        nonisolated(unsafe) var depth = 0
        try b.addMethod("describe") { (self_: ObjectRef) -> Int in
            depth += 1
            defer { depth -= 1 }
            if depth > 8 { return -1_000_000 }
            return 10 + ((try? self_.asSuper(of: b).send("describe") as Int) ?? -1000)
        }
        try c.addMethod("describe") { (self_: ObjectRef) -> Int in
            depth += 1
            defer { depth -= 1 }
            if depth > 8 { return -1_000_000 }
            return 100 + ((try? self_.asSuper(of: c).send("describe") as Int) ?? -1000)
        }
        let obj = try c.createInstance()
        XCTAssertEqual(try obj.send("describe") as Int, 111)
        XCTAssertEqual(try obj.asSuper(of: c).send("describe") as Int, 11)
        XCTAssertEqual(try obj.asSuper(of: b).send("describe") as Int, 1)
        XCTAssertEqual(try obj.asSuper(of: b).send("describe").intValue, 1, "dynamic super send")
        try a.metaclass.addMethod("kind") { (_: ObjectRef) in 1 }
        try b.metaclass.addMethod("kind") { (_: ObjectRef) in 2 }
        XCTAssertEqual(try b.asSuper(of: b.metaclass).send("kind") as Int, 1, "super send of a class method")
    }

    /// `[super foo]` from a root class has nowhere to go: it must not re-dispatch to the
    /// object's own class (which would recurse for an overriding method).
    func testSuperSendFromARootClassDoesNotRedispatch() throws {
        try cls.addMethod("only") { (_: ObjectRef) in 1 }
        assertThrows(.doesNotRecognizeSelector(.init(className: cls.name, selector: "only", isClassMethod: false))) {
            try obj.asSuper(of: cls).send("only") as Int
        }
    }
}

let cAddInts: @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int = { _, _, a, b in a + b }
