// The process-wide forward handler (objc4's objc_setForwardHandler, test/forward.m): asked
// after the class's own stages declined, for each kind of send, before
// doesNotRecognizeSelector: and the error.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

private struct HandlerRefused: Error, Equatable {}

final class ForwardHandlerTests: ForwardingPipelineTestCase {
    override func tearDown() {
        RuntimeClass.setForwardHandler(nil)
        super.tearDown()
    }

    /// A handler answering `sel` with a * 10 + b, recording the receivers and selectors it saw.
    private func installMultiplier(_ sel: Selector, seen: Locked<[String]>) {
        RuntimeClass.setForwardHandler { inv in
            seen.append("\(inv.target.raw.map { UInt(bitPattern: $0) } ?? 0) \(inv.selector.name)")
            guard inv.selector == sel else { return false }
            let a: Int = try inv.argument(at: 0), b: Int = try inv.argument(at: 1)
            try inv.setReturnValue(a * 10 + b)
            return true
        }
    }

    private func tag(_ o: Object, _ sel: String) -> String { "\(UInt(bitPattern: o.raw)) \(sel)" }

    func testATypedSendGetsTheHandlersAnswer() throws {
        let cls = try makeClass("FwdHandlerTyped")
        let o = try cls.createInstance()
        let seen = Locked<[String]>([])
        installMultiplier("fhTyped:with:", seen: seen)
        // The first send builds the caller's signature; later ones take the exact-key path.
        for i in 0..<3 { XCTAssertEqual(try o.send("fhTyped:with:", i, 7) as Int, i * 10 + 7) }
        XCTAssertEqual(seen.current, Array(repeating: tag(o, "fhTyped:with:"), count: 3))
        // Another selector: declined, the typed error.
        XCTAssertThrowsError(try o.send("fhOther") as Int) { error in
            guard case RuntimeError.doesNotRecognizeSelector(let info) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(info.selector, "fhOther")
        }
    }

    func testADynamicSendGetsTheHandlersAnswerWithTheDeclaredTypes() throws {
        let cls = try makeClass("FwdHandlerDynamic")
        try cls.setMethodSignature { _, sel in sel.name == "fhDyn:with:" ? try Signature("q@:qq") : nil }
        let o = try cls.createInstance()
        let seen = Locked<[String]>([])
        installMultiplier("fhDyn:with:", seen: seen)
        XCTAssertEqual(try o.send("fhDyn:with:", 4, 2).intValue, 42)
        XCTAssertEqual(try o.send("fhDyn:with:", 5, 3).intValue, 53)
        XCTAssertEqual(seen.current, [tag(o, "fhDyn:with:"), tag(o, "fhDyn:with:")])
    }

    func testTheHandlerMayInvokeTheCallOnAnotherObject() throws {
        let t = try makeTarget("FwdHandlerTarget").createInstance()
        let tref = t.ref
        let o = try makeClass("FwdHandlerRedirect").createInstance()
        RuntimeClass.setForwardHandler { inv in
            guard inv.selector == "add:to:" else { return false }
            try inv.invoke(target: tref)
            return true
        }
        XCTAssertEqual(try o.send("add:to:", 30, 12) as Int, 42)
        XCTAssertThrowsError(try o.send("scale:", 2.0) as Double, "declined: scale: is not add:to:")
    }

    func testADecliningHandlerLeavesTheTypedErrorAndDoesNotRecognizeRunsAfterIt() throws {
        let cls = try makeClass("FwdHandlerDecline")
        let log = Locked<[String]>([])
        try cls.setDoesNotRecognizeSelector { _, sel in log.append("doesNotRecognize \(sel.name)") }
        let o = try cls.createInstance()
        RuntimeClass.setForwardHandler { inv in
            log.append("handler \(inv.selector.name)")
            return false
        }
        for _ in 0..<2 {
            XCTAssertThrowsError(try o.send("fhNope:", 1) as Int) { error in
                guard case RuntimeError.doesNotRecognizeSelector(let info) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(info.className.map { $0.hasPrefix("FwdHandlerDecline") }, true, "\(info)")
                XCTAssertEqual(info.selector, "fhNope:")
            }
        }
        XCTAssertThrowsError(try o.send("fhNope:", 1))
        XCTAssertEqual(log.current, Array(repeating: ["handler fhNope:", "doesNotRecognize fhNope:"], count: 3).flatMap { $0 })
    }

    func testAThrowingHandlersErrorIsTheSends() throws {
        let cls = try makeClass("FwdHandlerThrow")
        let o = try cls.createInstance()
        RuntimeClass.setForwardHandler { inv in
            if inv.selector == "fhRuntime:" {
                throw RuntimeError.invalidArgument(.init(className: "Handler", selector: "fhRuntime:", expected: "x", actual: "y"))
            }
            throw HandlerRefused()
        }
        XCTAssertThrowsError(try o.send("fhSwift:", 1) as Int) { error in
            guard case RuntimeError.implementationFailed(let info) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(info.className.map { $0.hasPrefix("FwdHandlerThrow") }, true, "\(info)")
            XCTAssertEqual(info.selector, "fhSwift:")
            XCTAssertEqual(info.underlying as? HandlerRefused, HandlerRefused())
        }
        XCTAssertThrowsError(try o.send("fhRuntime:", 1)) { error in
            guard case RuntimeError.invalidArgument(let info) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(info.expected, "x")
        }
    }

    func testTheClassesOwnStagesComeFirst() throws {
        let t = try makeTarget("FwdHandlerFirstTarget").createInstance()
        let tref = t.ref
        let asked = Locked(0)
        RuntimeClass.setForwardHandler { _ in
            asked.withLock { $0 += 1 }
            return false
        }
        let viaTarget = try makeClass("FwdHandlerViaTarget")
        try viaTarget.setForwardingTarget { _, _ in tref }
        XCTAssertEqual(try viaTarget.createInstance().send("add:to:", 1, 2) as Int, 3)
        let viaInvocation = try makeClass("FwdHandlerViaInvocation")
        try viaInvocation.setForwardInvocation { inv in try inv.setReturnValue(99) }
        XCTAssertEqual(try viaInvocation.createInstance().send("add:to:", 1, 2) as Int, 99)
        let resolved = try makeClass("FwdHandlerResolved")
        try resolved.setResolveInstanceMethod { cls, sel in
            try cls.addMethod(sel) { (_: ObjectRef, a: Int, b: Int) in a - b }
            return true
        }
        XCTAssertEqual(try resolved.createInstance().send("add:to:", 1, 2) as Int, -1)
        XCTAssertEqual(asked.current, 0)
    }

    func testNilRestoresTheDefaultAndReleasesTheHandler() throws {
        final class Capture: Sendable {}
        let o = try makeClass("FwdHandlerRestore").createInstance()
        weak var captured: Capture?
        do {
            let capture = Capture()
            captured = capture
            RuntimeClass.setForwardHandler { inv in
                withExtendedLifetime(capture) {}
                try inv.setReturnValue(5)
                return true
            }
        }
        XCTAssertNotNil(captured)
        XCTAssertEqual(try o.send("fhRestore") as Int, 5)
        RuntimeClass.setForwardHandler(nil)
        XCTAssertNil(captured, "the replaced handler is released")
        XCTAssertThrowsError(try o.send("fhRestore") as Int) { error in
            guard case RuntimeError.doesNotRecognizeSelector = error else { return XCTFail("\(error)") }
        }
        // A second handler replaces the first.
        RuntimeClass.setForwardHandler { inv in try inv.setReturnValue(6); return true }
        RuntimeClass.setForwardHandler { inv in try inv.setReturnValue(7); return true }
        XCTAssertEqual(try o.send("fhRestore") as Int, 7)
    }

    func testTheForwardingIMPReachesTheHandler() throws {
        let cls = try makeClass("FwdHandlerIMP")
        try cls.addMethod("fhImp:with:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        _ = try cls.replaceMethod("fhImp:with:", implementation: .forwarding, types: "q@:qq")
        let o = try cls.createInstance()
        let seen = Locked<[String]>([])
        installMultiplier("fhImp:with:", seen: seen)
        XCTAssertEqual(try o.send("fhImp:with:", 3, 4) as Int, 34)
        typealias F = @convention(c) (sf_id, sf_sel, Int, Int) -> Int
        XCTAssertEqual(unsafeBitCast(IMP.forwarding.pointer, to: F.self)(o.raw, Selector("fhImp:with:").raw, 5, 6), 56)
        XCTAssertEqual(sf_last_error(), SF_OK)
        XCTAssertEqual(seen.current, [tag(o, "fhImp:with:"), tag(o, "fhImp:with:")])
    }

    func testACSendReachesTheHandlerWhenTheClassDeclaresTheTypes() throws {
        let declared = try makeClass("FwdHandlerCDeclared")
        try declared.setMethodSignature { _, _ in try Signature("q@:qq") }
        let plain = try makeClass("FwdHandlerCPlain")
        let d = try declared.createInstance(), p = try plain.createInstance()
        let seen = Locked<[String]>([])
        installMultiplier("fhC:with:", seen: seen)
        let args = FwdCArgs()
        args.add(Int(8))
        args.add(Int(9))
        var r = 0
        XCTAssertEqual(args.send(d.raw, "fhC:with:", &r), SF_OK)
        XCTAssertEqual(r, 89)
        // No types to build a record from: the handler is not asked.
        XCTAssertEqual(args.send(p.raw, "fhC:with:", &r), SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(seen.current, [tag(d, "fhC:with:")])
    }
}
