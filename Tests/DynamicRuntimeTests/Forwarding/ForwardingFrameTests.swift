// One miss sequence for both kinds of frame: a Swift send and sf_msg_send visit the same
// stages, in the same order, and end the same way.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingFrameTests: XCTestCase {
    /// A class with every stage defined, each declining, recording the order it ran in.
    private func makeDecliningClass(_ stages: Locked<[String]>, forward: Bool) throws -> RuntimeClass {
        let cls = try makeClass("FwdFrames")
        try cls.setResolveInstanceMethod { _, _ in stages.withLock { $0.append("resolve") }; return false }
        try cls.setForwardingTarget { _, _ in stages.withLock { $0.append("target") }; return nil }
        try cls.setMethodSignature { _, _ in stages.withLock { $0.append("signature") }; return try Signature("q@:q") }
        if forward {
            try cls.setForwardInvocation { inv in
                stages.withLock { $0.append("invocation") }
                let x: Int = try inv.argument(at: 0)
                try inv.setReturnValue(x * 3)
            }
        }
        try cls.setDoesNotRecognizeSelector { _, _ in stages.withLock { $0.append("unrecognized") } }
        return cls
    }

    private func cSend(_ o: Object, _ name: String, _ x: Int64) -> (sf_status, Int64) {
        var ret: Int64 = 0
        var arg = x
        let status = withUnsafeMutablePointer(to: &arg) { pa in
            var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(pa)]
            return args.withUnsafeMutableBufferPointer { sf_msg_send(o.raw, Selector(name).raw, &ret, $0.baseAddress) }
        }
        return (status, ret)
    }

    func testSwiftAndCFramesVisitTheSameStagesInOrder() throws {
        let stages = Locked<[String]>([])
        let o = try makeDecliningClass(stages, forward: true).createInstance()

        let swift: Int = try o.send("triple:", 7)
        let swiftStages = stages.withLock { s in defer { s = [] }; return s }
        let (status, c) = cSend(o, "tripleC:", 8)
        let cStages = stages.withLock { $0 }

        XCTAssertEqual(swift, 21)
        XCTAssertEqual(status, SF_OK)
        XCTAssertEqual(c, 24)
        XCTAssertEqual(swiftStages, ["resolve", "target", "signature", "invocation"])
        XCTAssertEqual(cStages, swiftStages)
    }

    func testSwiftAndCFramesEndInDoesNotRecognizeAlike() throws {
        let stages = Locked<[String]>([])
        let o = try makeDecliningClass(stages, forward: false).createInstance()

        XCTAssertThrowsError(try o.send("nothing:", 1, as: Int.self)) { error in
            guard case .doesNotRecognizeSelector(let context)? = error as? RuntimeError, context.selector == "nothing:",
                  !context.isClassMethod else {
                return XCTFail("\(error)")
            }
        }
        let swiftStages = stages.withLock { s in defer { s = [] }; return s }
        let (status, _) = cSend(o, "nothingC:", 1)
        XCTAssertEqual(status, SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(swiftStages, ["resolve", "target", "unrecognized"])
        XCTAssertEqual(stages.withLock { $0 }, swiftStages)
    }
}
