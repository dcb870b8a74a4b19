import TestSupport
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

/// object_dispose from the C API on objects Swift code set up: Swift observers, Swift-set ivars
/// and associations (the C scenario covers the rest).
final class CAPIObjectDisposeTests: XCTestCase {
    func testDisposalRunsSwiftObserversAndReleasesWhatSwiftStored() throws {
        let cls = try RuntimeClass(name: uniqueClassName("Disposed"), ivars: [("child", .object)])
        let before = Runtime.liveObjectCount
        let raw = try XCTUnwrap(sf_class_createInstance(cls.raw))
        let events = Mutex<[String]>([])
        do {
            let child = try cls.createInstance()
            XCTAssertNotNil(child.onDeallocate { _ in events.withLock { $0.append("child") } })
            try ObjectRef(raw).setValue(child, forIvar: "child")
            let associated = try cls.createInstance()
            XCTAssertNotNil(associated.onDeallocate { _ in events.withLock { $0.append("associated") } })
            XCTAssertTrue(ObjectRef(raw).setAssociatedValue(associated, for: AssociationKey("k")))
        }
        XCTAssertNotNil(ObjectRef(raw).onDeallocate { _ in events.withLock { $0.append("self") } })
        _ = sf_retain(raw)
        XCTAssertEqual(sf_object_retainCount(raw), 2)
        XCTAssertEqual(sf_object_dispose(raw), SF_OK)
        XCTAssertEqual(events.withLock { $0 }, ["self", "child", "associated"], "observers first, then ivars, then associations")
        XCTAssertEqual(Runtime.liveObjectCount, before)
        XCTAssertEqual(sf_class_live_instances(cls.raw), 0)
        XCTAssertNoThrow(try cls.dispose())
    }

    func testRefusalsNameWhatWasWrong() throws {
        let cls = try RuntimeClass(name: uniqueClassName("DisposeRefused"))
        XCTAssertEqual(sf_object_dispose(nil), SF_ERR_INVALID_ARGUMENT)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("expected an object, got NULL"), String(cString: sf_last_error_message()))
        XCTAssertEqual(sf_object_dispose(sf_class_as_object(cls.raw)), SF_ERR_INVALID_ARGUMENT)
        let message = String(cString: sf_last_error_message())
        XCTAssertTrue(message.contains(cls.name) && message.contains("a class object"), message)
        let small = try SmallObjectFixture.make(3)
        XCTAssertEqual(sf_object_dispose(small.raw), SF_ERR_INVALID_ARGUMENT)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("small (tagged) object"), String(cString: sf_last_error_message()))
        XCTAssertEqual(try small.send("payload") as Int, 3, "a refused disposal leaves the value as it was")
    }
}
