// The forwarding path from C (sf_msg_send), and its loops and failures.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingFromCAndLoopTests: ForwardingPipelineTestCase {
    // MARK: - Forwarding from C (sf_msg_send)

    func testCSendsThroughEachStage() throws {
        let target = try makeTarget()
        let t = try target.createInstance()

        // Fast forwarding.
        let fast = try makeClass("FwdCFast")
        try fast.setForwardingTarget { _, _ in t.ref }
        let f = try fast.createInstance()
        let args = FwdCArgs()
        args.add(Int64(40))
        args.add(Int64(2))
        var ret: Int64 = 0
        XCTAssertEqual(args.send(f.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 42)

        // forwardInvocation: without a signature: a C caller's types are unknown.
        let blind = try makeClass("FwdCBlind")
        try blind.setForwardInvocation { inv in try inv.invoke(target: t) }
        let b = try blind.createInstance()
        XCTAssertEqual(args.send(b.raw, "add:to:", &ret), SF_ERR_FORWARDING)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("methodSignatureForSelector"))

        // With a signature.
        try blind.setMethodSignature { _, sel in sel.name == "add:to:" ? try Signature("q@:qq") : nil }
        ret = 0
        XCTAssertEqual(args.send(b.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 42)

        // A NULL argument pointer is an error, not a crash.
        let holes = FwdCArgs()
        holes.add(Int64(1))
        holes.ptrs.append(nil)
        XCTAssertEqual(holes.send(b.raw, "add:to:", &ret), SF_ERR_INVALID_ARGUMENT)
    }

    func testCForwardedReturnWritesNoMoreThanTheReturnType() throws {
        // A C caller passes storage that fits the return type: 4 bytes for a float, the
        // struct's size for a struct, a word for integers (as libffi does for direct calls).
        let target = try makeClass("FwdCNarrowTarget")
        try target.addMethod("ratio") { (_: ObjectRef) -> Float in 0.75 }
        try target.addMethod("color") { (_: ObjectRef) in FwdRGB(r: 1, g: 2, b: 3) }
        let t = try target.createInstance()
        let proxy = try makeProxyClass("FwdCNarrowProxy")
        let p = try Proxy.create(proxy, wrapping: t)

        func check(_ receiver: sf_id, _ sel: Selector, valueBytes: Int, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
            defer { buffer.deallocate() }
            buffer.initializeMemory(as: UInt8.self, repeating: 0xAA, count: 16)
            XCTAssertEqual(sf_msg_send(receiver, sel.raw, buffer, nil), SF_OK, file: file, line: line)
            let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: 16))
            XCTAssertEqual(Array(bytes[valueBytes...]), Array(repeating: 0xAA, count: 16 - valueBytes),
                           "bytes past the \(valueBytes)-byte return value were overwritten", file: file, line: line)
            return Array(bytes[..<valueBytes])
        }
        // Direct calls (libffi) write exactly the value.
        let direct = check(t.raw, "ratio", valueBytes: 4)
        XCTAssertEqual(direct, withUnsafeBytes(of: Float(0.75)) { Array($0) })
        XCTAssertEqual(check(t.raw, "color", valueBytes: 3), [1, 2, 3])
        // Forwarded calls must behave the same.
        XCTAssertEqual(check(p.raw, "ratio", valueBytes: 4), direct)
        XCTAssertEqual(check(p.raw, "color", valueBytes: 3), [1, 2, 3])
    }

    func testDynamicSendsThroughForwardingAreTypedByTheMethodThatRuns() throws {
        let target = try makeTarget()
        try target.addMethod("origin:") { (_: ObjectRef, p: Point) in Point(x: p.y, y: p.x) }
        let t = try target.createInstance()
        let fast = try makeClass("FwdDynFast")
        try fast.setForwardingTarget { _, _ in t.ref }
        let f = try fast.createInstance()
        let proxy = try Proxy.create(try makeProxyClass("FwdDynProxy"), wrapping: t)
        let point = Point(x: 1, y: 2)
        for receiver in [f, proxy] {
            XCTAssertEqual(try receiver.send("add:to:", 2, 3).intValue, 5)
            XCTAssertEqual(try receiver.send("scale:", 2.0).doubleValue, 5.0)
            XCTAssertEqual(try receiver.send("origin:", point).structValue(as: Point.self), Point(x: 2, y: 1))
            // A 32-byte struct is more than the storage a dynamic send starts with: it gets a
            // buffer of its own, and the value.
            XCTAssertEqual(try receiver.send("frame:", point).structValue(as: FwdRect.self),
                           FwdRect(origin: point, size: FwdSize(width: 10, height: 20)))
            // Typed sends state the type and get the value.
            XCTAssertEqual(try receiver.send("frame:", point) as FwdRect,
                           FwdRect(origin: point, size: FwdSize(width: 10, height: 20)))
        }
    }

    // MARK: - Loops and robustness

    func testForwardInvocationResendingToSelfIsAnErrorNotAStackOverflow() throws {
        let cls = try makeClass("FwdLoopInvoke")
        try cls.setForwardInvocation { inv in try inv.invoke() }
        let o = try cls.createInstance()
        XCTAssertTrue(thrownError { try o.send("spin:", 1) as Int }?.isForwardingFailed ?? false)

        let cls2 = try makeClass("FwdLoopResend")
        try cls2.setForwardInvocation { inv in _ = try inv.target.send(inv.selector, arguments: inv.argumentValues) }
        let o2 = try cls2.createInstance()
        XCTAssertTrue(thrownError { try o2.send("spin:", 1) as Int }?.isForwardingFailed ?? false)
        XCTAssertTrue(thrownError { try o2.send("spin:", 1) }?.isForwardingFailed ?? false)

        // From C too.
        try cls.setMethodSignature { _, _ in try Signature("q@:q") }
        let args = FwdCArgs()
        args.add(Int64(1))
        var ret: Int64 = 0
        XCTAssertEqual(args.send(o.raw, "spin:", &ret), SF_ERR_FORWARDING)
    }

    func testForwardingTargetPingPongIsAnError() throws {
        let (x, y) = try forwardingPingPong(("FwdPing", "FwdPong"))
        XCTAssertTrue(thrownError { try x.send("where", as: Int.self) }?.isForwardingFailed ?? false)
        XCTAssertTrue(thrownError { try y.send("where:", 1.5) }?.isForwardingFailed ?? false)
        // Break the cycle so both can go.
        try x.setValue(ObjectRef.nil, forIvar: "peer")
        try y.setValue(ObjectRef.nil, forIvar: "peer")
        XCTAssertEqual(x.retainCount, 1)
        XCTAssertEqual(y.retainCount, 1)
    }

    func testFailedForwardingLeavesTheThreadUsable() throws {
        let target = try makeTarget()
        let t = try target.createInstance()
        let looping = try makeClass("FwdLoopMany")
        try looping.setForwardInvocation { inv in try inv.invoke() }
        let l = try looping.createInstance()
        let good = try makeClass("FwdGoodAfterLoops")
        try good.setForwardInvocation { inv in try inv.invoke(target: t) }
        let g = try good.createInstance()
        // If the nesting depth leaked on errors, this would start failing after a few rounds.
        for _ in 0..<150 {
            XCTAssertTrue(thrownError { try l.send("spin") as Int }?.isForwardingFailed ?? false)
        }
        XCTAssertEqual(try g.send("add:to:", 1, 1) as Int, 2)
        // Deep but finite forwarding chains still work.
        var chain = t
        var keep: [Object] = []
        for i in 0..<40 {
            let c = try makeClass("FwdChain\(i)", ivars: [("next", .object)])
            try c.setForwardingTarget { recv, _ in try recv.value(ofIvar: "next", as: ObjectRef.self) }
            let o = try c.createInstance()
            try o.setValue(chain.ref, forIvar: "next")
            keep.append(o)
            chain = o
        }
        XCTAssertEqual(try chain.send("add:to:", 20, 22) as Int, 42)
    }

    func testEveryStageIsAMethodCCodeCouldDefine() throws {
        // The Swift setters install real methods under the Objective-C names.
        let cls = try makeClass("FwdRealMethods")
        try setEveryForwardingStage(on: cls)
        for name in ["forwardingTargetForSelector:", "methodSignatureForSelector:", "forwardInvocation:", "doesNotRecognizeSelector:"] {
            XCTAssertNotNil(cls.ownMethod(for: Selector(name)), name)
            XCTAssertTrue(sf_class_respondsToSelector(cls.raw, Selector(name).raw), name)
        }
        XCTAssertNotNil(cls.metaclass.ownMethod(for: "resolveInstanceMethod:"))
        XCTAssertNotNil(cls.metaclass.ownMethod(for: "resolveClassMethod:"))
    }
}
