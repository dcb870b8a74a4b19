import DynamicRuntime
import Foundation
import XCTest

final class WeakProxyTests: XCTestCase {
    func testForwardsWhileTheTargetLivesThenDropsOrThrows() throws {
        let recorder = try Recorder("WeakProxyTarget")
        let proxyClass = try Proxy.makeWeakClass(name: uniqueName("WeakProxy"))
        var target: Object? = try recorder.make()
        let freed = DeallocFlag(target!)
        let retainsBefore = target!.retainCount
        let proxy = try Proxy.createWeak(proxyClass, wrapping: target!)
        XCTAssertEqual(target!.retainCount, retainsBefore, "the proxy does not retain its target")
        XCTAssertEqual(try proxy.send("add:to:", 2, 3, as: Int.self), 5)
        try proxy.send("ping", as: Void.self)
        XCTAssertEqual(recorder.selectors, ["ping"])
        XCTAssertFalse(proxy.responds(to: "ping"), "responds(to:) is a lookup on the proxy class")
        XCTAssertTrue(Proxy.targetResponds(proxy, to: "ping"))
        XCTAssertEqual(Proxy.weakTarget(of: proxy), target)

        target = nil
        XCTAssertTrue(freed.deallocated)
        XCTAssertNil(Proxy.weakTarget(of: proxy))
        XCTAssertFalse(Proxy.targetResponds(proxy, to: "ping"))
        try proxy.send("ping", as: Void.self)
        let dynamic = try proxy.send("add:to:", 2, 3)
        XCTAssertEqual(dynamic.intValue ?? 0, 0, "a dynamic send reads zero")
        XCTAssertThrowsError(try proxy.send("add:to:", 2, 3, as: Int.self)) {
            guard case .forwardingFailed(let context) = $0 as? RuntimeError, context.selector == "add:to:" else { return XCTFail("\($0)") }
            XCTAssertEqual(context.className, proxyClass.name)
            XCTAssertTrue(context.reason?.contains("deallocated") ?? false, "\($0)")
        }
        XCTAssertEqual(recorder.selectors, ["ping"], "nothing reaches a dead target")
    }

    func testCreateWeakRefusesAStrongProxyClass() throws {
        let strong = try Proxy.makeClass(name: uniqueName("StrongProxy"))
        XCTAssertThrowsError(try Proxy.createWeak(strong, wrapping: try Recorder().make())) {
            guard case .invalidArgument(let context) = $0 as? RuntimeError else { return XCTFail("\($0)") }
            XCTAssertEqual(context.className, strong.name)
        }
    }
}
