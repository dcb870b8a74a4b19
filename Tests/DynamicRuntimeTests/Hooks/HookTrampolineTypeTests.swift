// Every supported argument and return type passes through a
// hook's trampoline unchanged — scalars, C strings, objects, classes, selectors, pointers,
// structs in registers and in memory, and many-argument signatures that spill to the stack.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// What the native many-argument C IMP last received (it cannot capture context).
nonisolated(unsafe) private var nativeRecord: [String] = []

final class HookTrampolineTypeTests: LiveObjectTestCase {
    /// `echo:` returns its argument; `echo:` is sent typed (callWords or libffi) and dynamically,
    /// unhooked, then through before + instead + after hooks, then with an instead-hook that
    /// replaces the argument, then unhooked again.
    func checkPassthrough<T: MessageValue & Equatable>(_ code: String, _ values: [T],
                                                        file: StaticString = #filePath, line: UInt = #line) throws {
        nonisolated(unsafe) let values = values  // read by hooks that run on this thread
        let cls = try makeClass("HookType_\(code.filter { $0.isLetter || $0.isNumber })")
        try cls.addMethod("echo:") { (_: ObjectRef, x: T) -> T in x }
        let encoding = cls.ownMethod(for: "echo:")!.signature.encoding
        XCTAssertEqual(encoding, "\(code)@:\(code)", file: file, line: line)
        let original = cls.ownMethod(for: "echo:")!.implementation
        let o = try cls.createInstance()
        let direct = try values.map { try o.send("echo:", $0) as T }
        XCTAssertEqual(direct, values, "\(code) unhooked", file: file, line: line)
        let directDynamic = try values.map { fwdFingerprint(try o.send("echo:", $0)) }

        nonisolated(unsafe) var seenArguments: [T] = []
        nonisolated(unsafe) var seenReturns: [T] = []
        nonisolated(unsafe) var dynamicArguments: [String] = []
        let tokens = [
            try cls.hook("echo:", .before) { ctx in
                seenArguments.append(try ctx.argument(at: 0))
                dynamicArguments.append(fwdFingerprint(ctx.argumentValues[0]))
            },
            try cls.hook("echo:", .instead) { ctx in try ctx.proceed() },
            try cls.hook("echo:", .after) { ctx in seenReturns.append(try ctx.returnValue()) },
        ]
        let hooked = try values.map { try o.send("echo:", $0) as T }
        XCTAssertEqual(hooked, values, "\(code) through the trampoline", file: file, line: line)
        XCTAssertEqual(seenArguments, values, "\(code) arguments as hooks see them", file: file, line: line)
        XCTAssertEqual(seenReturns, values, "\(code) return values as hooks see them", file: file, line: line)
        XCTAssertEqual(dynamicArguments, values.map { fwdFingerprint(DynamicValue.load(T.typeEncoding, from: fwdArgumentBytes($0), isReturn: false)) },
                       "\(code) dynamic view of arguments", file: file, line: line)
        let hookedDynamic = try values.map { fwdFingerprint(try o.send("echo:", $0)) }
        XCTAssertEqual(hookedDynamic, directDynamic, "\(code) dynamic sends through the trampoline", file: file, line: line)

        // An instead-hook that writes an argument and the return value.
        let replaced = try cls.hook("echo:", .instead) { ctx in
            try ctx.setArgument(values.last!, at: 0)
            try ctx.proceed()
            XCTAssertEqual(try ctx.returnValue(as: T.self), values.last!, file: file, line: line)
            try ctx.setReturnValue(values.first!)
        }
        XCTAssertEqual(try o.send("echo:", values.first!) as T, values.first!, file: file, line: line)
        XCTAssertEqual(seenArguments.last, values.first!, "before-hooks ran before the argument was replaced", file: file, line: line)
        replaced.remove()
        tokens.forEach { $0.remove() }
        XCTAssertEqual(cls.ownMethod(for: "echo:")!.implementation, original, file: file, line: line)
        XCTAssertEqual(try values.map { try o.send("echo:", $0) as T }, values, file: file, line: line)
    }

    func testIntegerTypesPassThrough() throws {
        try checkPassthrough("c", [Int8.min, -1, 0, 1, Int8.max])
        try checkPassthrough("C", [UInt8.min, 1, 0x80, UInt8.max])
        try checkPassthrough("s", [Int16.min, -1, 0, Int16.max])
        try checkPassthrough("S", [UInt16.min, 0x8000, UInt16.max])
        try checkPassthrough("i", [Int32.min, -1, 0, Int32.max])
        try checkPassthrough("I", [UInt32.min, 0x8000_0000, UInt32.max])
        try checkPassthrough("q", [Int.min, -1, 0, Int.max])
        try checkPassthrough("Q", [UInt64.min, 1 << 63, UInt64.max])
        try checkPassthrough("B", [true, false])
    }

    func testFloatingPointTypesPassThrough() throws {
        try checkPassthrough("f", [Float(0), -0.5, .pi, .greatestFiniteMagnitude, -.infinity, .leastNonzeroMagnitude])
        try checkPassthrough("d", [0, -0.5, .pi, .greatestFiniteMagnitude, .infinity, .leastNonzeroMagnitude])
    }

    func testPointerLikeTypesPassThrough() throws {
        try checkPassthrough("*", [fwdStaticCString("hello"), fwdStaticCString(""), CString(nil)])
        let holder = try makeClass("HookTypeObjects")
        let a = try holder.createInstance()
        let b = try holder.createInstance()
        try checkPassthrough("@", [Optional(a), Optional(b), nil])
        XCTAssertEqual(a.retainCount, 1, "objects through the trampoline keep balanced counts")
        XCTAssertEqual(b.retainCount, 1)
        try checkPassthrough("#", [ClassRef(holder), ClassRef(holder.metaclass), ClassRef(nil)])
        try checkPassthrough(":", [Selector("echo:"), Selector("some:other:selector:")])
        try checkPassthrough("^v", [UnsafeRawPointer(bitPattern: 0x1000)!, UnsafeRawPointer(bitPattern: UInt.max & ~7)!])
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 2)
    }

    func testStructTypesPassThrough() throws {
        try checkPassthrough("{Point=dd}", [Point(x: 1.5, y: -2.5), Point(x: .pi, y: .greatestFiniteMagnitude)])
        try checkPassthrough("{Rect={Point=dd}{Size=dd}}", [
            FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4)),
            FwdRect(origin: Point(x: -1e300, y: 0.25), size: FwdSize(width: .infinity, height: -0.0)),
        ])
        try checkPassthrough("{RGB=CCC}", [FwdRGB(r: 1, g: 2, b: 3), FwdRGB(r: 255, g: 0, b: 128)])
    }

    func testStructsThroughAClassMethodTrampoline() throws {
        let cls = try makeClass("HookTypeClassStruct")
        try cls.metaclass.addMethod("inset:by:") { (_: ObjectRef, r: FwdRect, d: Point) in
            FwdRect(origin: Point(x: r.origin.x + d.x, y: r.origin.y + d.y),
                    size: FwdSize(width: r.size.width - 2 * d.x, height: r.size.height - 2 * d.y))
        }
        let r = FwdRect(origin: Point(x: 0, y: 0), size: FwdSize(width: 10, height: 20))
        let d = Point(x: 1, y: 2)
        let expected = FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 8, height: 16))
        XCTAssertEqual(try cls.send("inset:by:", r, d) as FwdRect, expected)
        nonisolated(unsafe) var seen: [String] = []
        let t = try cls.hookClassMethod("inset:by:", .after) { ctx in
            seen.append("\(try ctx.argument(at: 0, as: FwdRect.self).size.width) \(try ctx.argument(at: 1, as: Point.self).y)")
            XCTAssertEqual(try ctx.returnValue(as: FwdRect.self), expected)
        }
        XCTAssertEqual(try cls.send("inset:by:", r, d) as FwdRect, expected)
        XCTAssertEqual(seen, ["10.0 2.0"])
        t.remove()
    }

    func testLargeStructArgumentsSurviveTheCallToTheOriginal() throws {
        // libffi's ffi_call (x86-64) points avalue entries of structs over 16 bytes at copies in
        // its own frame; the trampoline's argument vector must stay valid after the original ran.
        let cls = try makeClass("HookTypeBigStructArgs")
        let received = Locked<[FwdRect]>([])
        try cls.addMethod("area:scale:") { (_: ObjectRef, r: FwdRect, k: Double) -> Double in
            received.withLock { $0.append(r) }
            return r.size.width * r.size.height * k
        }
        let o = try cls.createInstance()
        let rect = FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4))
        nonisolated(unsafe) var afterSaw: [FwdRect] = []
        nonisolated(unsafe) var kept: Invocation?
        let twice = try cls.hook("area:scale:", .instead) { ctx in
            try ctx.proceed()
            try ctx.proceed()  // the original runs twice with the same arguments
        }
        let after = try cls.hook("area:scale:", .after) { ctx in
            afterSaw.append(try ctx.argument(at: 0, as: FwdRect.self))
            kept = ctx.makeInvocation()
        }
        XCTAssertEqual(try o.send("area:scale:", rect, 2.0) as Double, 24)
        XCTAssertEqual(received.current, [rect, rect])
        XCTAssertEqual(afterSaw, [rect])
        XCTAssertEqual(try kept!.argument(at: 0, as: FwdRect.self), rect)
        twice.remove()
        after.remove()
        try kept!.invoke()
        try kept!.invoke()
        XCTAssertEqual(received.current, [rect, rect, rect, rect], "a kept record replays the struct it captured, every time")
        XCTAssertEqual(try kept!.returnValue(as: Double.self), 24)
    }

    // MARK: - Many arguments, interleaved

    static let mixedTypes = "d@:cfidqfSdBfId{Point=dd}fQd*@:df{Rect={Point=dd}{Size=dd}}sC"

    func mixedArguments(_ obj: Object, _ cls: RuntimeClass) -> [any MessageArgument] {
        [
            Int8(-3), Float(1.5), Int32(-70000), Double(2.25), Int(-(1 << 40)), Float(-0.125),
            UInt16(65000), Double(-1e10), true, Float(3.75), UInt32(4_000_000_000), Double.pi,
            Point(x: 7, y: -8), Float(100.5), UInt64.max - 5, Double(6.5),
            fwdStaticCString("mixed"), obj.ref, Selector("mixed:selector:"), Double(-0.001), Float(9.25),
            FwdRect(origin: Point(x: 11, y: 12), size: FwdSize(width: 13, height: 14)), Int16(-1234), UInt8(200),
        ]
    }

    func testMixedManyArgumentSignatureThroughTheTrampoline() throws {
        let sig = try Signature(Self.mixedTypes)
        XCTAssertEqual(sig.explicitArgumentCount, 24)
        let cls = try makeClass("HookTypeMixed")
        let received = Locked<[String]>([])
        try cls.addMethod("mixed", types: Self.mixedTypes) { ret, args in
            var sum = 0.0
            var prints: [String] = []
            for i in 2..<sig.argumentTypes.count {
                let v = DynamicValue.load(sig.argumentTypes[i], from: args[i]!, isReturn: false)
                prints.append(fwdFingerprint(v))
                sum += v.doubleValue ?? Double(v.intValue ?? 0)
            }
            received.withLock { $0.append(prints.joined(separator: " ")) }
            ret.storeBytes(of: sum, as: Double.self)
        }
        let o = try cls.createInstance()
        let arg = try cls.createInstance()
        let args = mixedArguments(arg, cls)
        let direct = try o.send("mixed", arguments: args)
        let expectedPrint = received.current.last!

        nonisolated(unsafe) var hookViews: [String] = []
        nonisolated(unsafe) var afterReturns: [Double] = []
        let tokens = [
            try cls.hook("mixed", .before) { ctx in hookViews.append(ctx.argumentValues.map(fwdFingerprint).joined(separator: " ")) },
            try cls.hook("mixed", .instead) { ctx in try ctx.proceed() },
            try cls.hook("mixed", .after) { ctx in
                hookViews.append(ctx.argumentValues.map(fwdFingerprint).joined(separator: " "))
                afterReturns.append(try ctx.returnValue(as: Double.self))
            },
        ]
        let hooked = try o.send("mixed", arguments: args)
        XCTAssertEqual(hooked.doubleValue, direct.doubleValue)
        XCTAssertEqual(afterReturns, [direct.doubleValue!])
        XCTAssertEqual(received.current.last, expectedPrint, "the original received every argument unchanged")
        XCTAssertEqual(hookViews, [expectedPrint, expectedPrint])

        // A hook that changes a float and a struct deep in the list.
        let change = try cls.hook("mixed", .before) { ctx in
            try ctx.setArgument(Float(-42.5), at: 13)
            try ctx.setArgument(FwdRect(origin: Point(x: 0, y: 0), size: FwdSize(width: 1, height: 1)), at: 21)
        }
        _ = try o.send("mixed", arguments: args)
        let changed = received.current.last!.split(separator: " ")
        let original = expectedPrint.split(separator: " ")
        XCTAssertEqual(changed[13], Substring(fwdFingerprint(.float(-42.5))))
        XCTAssertNotEqual(changed[21], original[21])
        XCTAssertEqual(changed.enumerated().filter { $0.offset != 13 && $0.offset != 21 }.map(\.element),
                       original.enumerated().filter { $0.offset != 13 && $0.offset != 21 }.map(\.element))
        change.remove()
        tokens.forEach { $0.remove() }
        XCTAssertEqual(arg.retainCount, 1)
    }

    typealias Native = @convention(c) (sf_id?, sf_sel?, Int8, Float, Int32, Double, Int64, Float, UInt16, Double,
                                       Bool, Float, UInt32, Double, Float, UInt64, Double, Int16, UInt8, Double,
                                       Float, Double, Float) -> Double

    func testNativeCCallerAndCImplementationThroughTheTrampoline() throws {
        // A C function as the IMP and a C call site (a cast of sf_msg_lookup's result): the
        // trampoline sits between two real C frames, with 11 integer and 12 floating-point
        // arguments, so both register files spill to the stack.
        let native: Native = { _, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u in
            nativeRecord = ["\(a)", "\(b)", "\(c)", "\(d)", "\(e)", "\(f)", "\(g)", "\(h)", "\(i)", "\(j)", "\(k)",
                            "\(l)", "\(m)", "\(n)", "\(o)", "\(p)", "\(q)", "\(r)", "\(s)", "\(t)", "\(u)"]
            return Double(a) + Double(b) + Double(c) + d + Double(e) + Double(f) + Double(g) + h + (i ? 1 : 0)
                + Double(j) + Double(k) + l + Double(m) + Double(n) + o + Double(p) + Double(q) + r + Double(s) + t + Double(u)
        }
        let cls = try makeClass("HookTypeNative")
        let types = "d@:cfidqfSdBfIdfQdsCdfdf"
        try cls.addMethod("native", implementation: IMP(unsafeBitCast(native, to: sf_imp.self)), types: types)
        let o = try cls.createInstance()
        let sel = Selector("native")
        func call() -> Double {
            let f = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: Native.self)
            return f(o.raw, sel.raw, -5, 0.5, -100_000, 1.25, -(1 << 50), 2.5, 60000, -3.5, true, 4.5, 3_000_000_000,
                     5.75, -6.5, 1 << 60, 7.125, -30000, 250, 8.5, 9.5, -10.25, 11.5)
        }
        let direct = call()
        let directRecord = nativeRecord
        XCTAssertEqual(directRecord.count, 21)

        nonisolated(unsafe) var hookSaw: [String] = []
        let t1 = try cls.hook("native", .before) { ctx in
            hookSaw.append("\(try ctx.argument(at: 0, as: Int8.self)) \(try ctx.argument(at: 20, as: Float.self)) \(try ctx.argument(at: 13, as: UInt64.self))")
        }
        let t2 = try cls.hook("native", .instead) { ctx in try ctx.proceed() }
        nativeRecord = []
        XCTAssertNotEqual(fwdIMP(sf_msg_lookup(o.raw, sel.raw)), IMP(unsafeBitCast(native, to: sf_imp.self)), "the trampoline is what C finds")
        let hooked = call()
        XCTAssertEqual(hooked, direct)
        XCTAssertEqual(nativeRecord, directRecord)
        XCTAssertEqual(hookSaw, ["-5 11.5 \(UInt64(1) << 60)"])
        t1.remove()
        t2.remove()
        XCTAssertEqual(fwdIMP(sf_msg_lookup(o.raw, sel.raw)), IMP(unsafeBitCast(native, to: sf_imp.self)))
        XCTAssertEqual(call(), direct)

        // The same call through sf_msg_send (libffi on the caller's side) agrees.
        let hook = try cls.hook("native", .after) { _ in }
        let args = FwdCArgs()
        args.add(Int8(-5)); args.add(Float(0.5)); args.add(Int32(-100_000)); args.add(Double(1.25))
        args.add(Int64(-(1 << 50))); args.add(Float(2.5)); args.add(UInt16(60000)); args.add(Double(-3.5))
        args.add(true); args.add(Float(4.5)); args.add(UInt32(3_000_000_000)); args.add(Double(5.75))
        args.add(Float(-6.5)); args.add(UInt64(1) << 60); args.add(Double(7.125)); args.add(Int16(-30000))
        args.add(UInt8(250)); args.add(Double(8.5)); args.add(Float(9.5)); args.add(Double(-10.25)); args.add(Float(11.5))
        var ret = 0.0
        nativeRecord = []
        XCTAssertEqual(args.send(o.raw, sel, &ret), SF_OK)
        XCTAssertEqual(ret, direct)
        XCTAssertEqual(nativeRecord, directRecord)
        hook.remove()
    }
}

/// The bytes `value` occupies as a message argument.
func fwdArgumentBytes<T: MessageArgument>(_ value: T) -> [UInt8] {
    withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { buf in
        buf.initializeMemory(as: UInt8.self, repeating: 0)
        value.storeArgument(to: buf.baseAddress!)
        return Array(buf)
    }
}

extension DynamicValue {
    /// Loads a value from bytes (test helper).
    static func load(_ type: TypeEncoding, from bytes: [UInt8], isReturn: Bool) -> DynamicValue {
        let padded = bytes + [UInt8](repeating: 0, count: 64)
        return padded.withUnsafeBytes { load(type, from: $0.baseAddress!, isReturn: isReturn) }
    }
}
