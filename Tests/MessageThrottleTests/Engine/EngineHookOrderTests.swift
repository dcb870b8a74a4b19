import TestSupport
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Instance rules among class-wide hooks: the class's and the object's hooks merge
/// position by position, so a class-wide observer sees every call an instance rule drops.
final class EngineHookOrderTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    func testAClassWideObserverSeesTheCallsAnInstanceRuleDrops() throws {
        let fx = try makeFixture()
        let limited = try fx.instance()
        let free = try fx.instance()
        let sent = Locked<[Int]>([])
        let returned = Locked<[Int]>([])
        let observer = try fx.cls.hook("tick:", .before) { ctx in
            let x = try ctx.argument(at: 0, as: Int.self)
            sent.withLock { $0.append(x) }
        }
        let after = try fx.cls.hook("tick:", .after) { ctx in
            let r = try ctx.returnValue(as: Int.self)
            returned.withLock { $0.append(r) }
        }
        let rule = try limited.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertEqual(try fx.tick(limited, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(limited, 2, at: 10), 0, "dropped by the instance rule")
        XCTAssertEqual(try fx.tick(limited, 3, at: 20), 0, "dropped by the instance rule")
        XCTAssertEqual(try fx.tick(free, 4, at: 30), 40, "other instances are not limited")
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(4, 30)])
        XCTAssertEqual(sent.current, [1, 2, 3, 4], "the class's before hook sees the dropped calls")
        XCTAssertEqual(returned.current, [10, 0, 0, 40], "and its after hook their result")
        XCTAssertTrue(rule.discard())
        XCTAssertEqual(limited.runtimeClass, fx.cls)
        XCTAssertEqual(try fx.tick(limited, 5, at: 200), 50)
        XCTAssertEqual(sent.current, [1, 2, 3, 4, 5])
        observer.remove()
        after.remove()
    }
}
