import CDynamicRuntime
import TestSupport
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Swift `String` arguments and returns through rules: a captured call keeps its own copy of
/// the strings (the sender's lent ones are freed when its send returns), and a suppressed call
/// can return the last real String result.
final class EngineStringTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    func testADebouncedCallReplaysItsStringArgumentLater() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("say:", oncePer: d, mode: .debounce, in: fx.engine)
        let before = sf_lent_mark()
        for (i, s) in ["first", "sécond", "thïrd 🌍"].enumerated() {
            fx.advance(to: i * 10)
            // A string built here dies with this iteration; the lent C copy with the send.
            try obj.send("say:", String(s.reversed()) + "", as: Void.self)
        }
        XCTAssertEqual(sf_lent_mark(), before, "the sends freed what they lent")
        XCTAssertEqual(try rule.pendingInvocation?.argument(at: 0, as: String.self), "🌍 drïht")
        fx.advance(to: 1000)
        XCTAssertEqual(fx.log.strings, ["🌍 drïht"])
    }

    func testAStringMethodThrottledReturnsItsResultsAndTheLastOneWhenSuppressed() throws {
        let fx = try makeFixture()
        let greeted = Locked<[String]>([])
        try fx.cls.addMethod("greet:") { (_: ObjectRef, name: String) -> String in
            greeted.append(name)
            return "hello " + name
        }
        let obj = try fx.instance()
        let rule = try obj.limit("greet:", oncePer: d, mode: .firstly, in: fx.engine)
        rule.suppressedReturn = .lastResult
        XCTAssertEqual(try obj.send("greet:", "ådam") as String, "hello ådam")
        XCTAssertEqual(try obj.send("greet:", "eve") as String, "hello ådam", "dropped: the last real result")
        fx.advance(to: 100)
        XCTAssertEqual(try obj.send("greet:", "") as String, "hello ")
        XCTAssertEqual(greeted.current, ["ådam", ""])

        let debounced = try fx.instance()
        let later = try debounced.limit("greet:", oncePer: d, mode: .debounce, in: fx.engine)
        later.suppressedReturn = .lastResult
        XCTAssertEqual(try debounced.send("greet:", "zoë") as String, "", "deferred: a zeroed return reads as empty")
        fx.advance(to: 1000)
        XCTAssertEqual(later.lastResult?.stringValue, "hello zoë", "the replay's result, kept by the record")
        XCTAssertEqual(greeted.current, ["ådam", "", "zoë"])
    }
}
