import TestSupport
import XCTest
import CDynamicRuntime
@testable import DynamicRuntime

/// An association made on an object while it is being deallocated is refused
/// (not stored, not retained): nothing leaks, and nothing reads the freed side table.
final class DeallocAssociationTests: XCTestCase {
    static let key = AssociationKey("late")
    nonisolated(unsafe) static let cKey = UnsafeRawPointer(bitPattern: 0x5EED)!

    private func makeClass(_ name: String) throws -> RuntimeClass {
        try RuntimeClass(name: name, ivars: [("child", .object)])
    }

    /// An owner whose `child` ivar's dealloc observer runs `late` on the dying owner.
    private func deallocWithChild(_ c: RuntimeClass, ownerHasSideTable: Bool,
                                  _ late: @escaping @Sendable (ObjectRef) -> Void) throws {
        let owner = try c.createInstance()
        if ownerHasSideTable { owner.setAssociatedValue(42, for: AssociationKey("early")) }
        let child = try c.createInstance()
        let ownerRef = owner.ref
        child.onDeallocate { _ in late(ownerRef) }
        try owner.setValue(child, forIvar: "child")
    }

    func testAssociationFromAnIvarsObserverIsRefused() throws {
        let c = try makeClass("Abuse.Assoc.Ivar")
        let baseline = Runtime.liveObjectCount
        for hasTable in [false, true] {
            nonisolated(unsafe) var stored: Bool?
            nonisolated(unsafe) var readBack: Any? = "unset"
            try deallocWithChild(c, ownerHasSideTable: hasTable) { owner in
                stored = owner.setAssociatedValue(try! c.createInstance(), for: Self.key)
                readBack = owner.associatedValue(for: Self.key)
            }
            XCTAssertEqual(stored, false, "side table before dealloc: \(hasTable)")
            XCTAssertNil(readBack)
            XCTAssertEqual(Runtime.liveObjectCount, baseline, "side table before dealloc: \(hasTable)")
        }
    }

    func testAssociationFromAnAssociatedValuesObserverIsRefused() throws {
        let c = try makeClass("Abuse.Assoc.Value")
        let baseline = Runtime.liveObjectCount
        nonisolated(unsafe) var stored: Bool?
        do {
            let owner = try c.createInstance()
            let value = try c.createInstance()
            let ownerRef = owner.ref
            value.onDeallocate { _ in stored = ownerRef.setAssociatedValue(try! c.createInstance(), for: Self.key) }
            owner.setAssociatedValue(value, for: AssociationKey("value"))
        }
        XCTAssertEqual(stored, false)
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testAssociationFromAnOwnDeallocObserverIsRefused() throws {
        let c = try makeClass("Abuse.Assoc.Own")
        let baseline = Runtime.liveObjectCount
        nonisolated(unsafe) var stored: Bool?
        do {
            let owner = try c.createInstance()
            owner.onDeallocate { me in stored = me.setAssociatedValue(try! c.createInstance(), for: Self.key) }
        }
        XCTAssertEqual(stored, false)
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testCAssociationDuringDeallocationIsRefusedWithAnError() throws {
        let c = try makeClass("Abuse.Assoc.C")
        let baseline = Runtime.liveObjectCount
        nonisolated(unsafe) var status: sf_status?
        nonisolated(unsafe) var message = ""
        try deallocWithChild(c, ownerHasSideTable: false) { owner in
            let value = try! c.createInstance()
            sf_setAssociatedObject(owner.raw, Self.cKey, value.raw)
            status = sf_last_error()
            message = String(cString: sf_last_error_message())
        }
        XCTAssertEqual(status, SF_ERR_INVALID_ARGUMENT)
        XCTAssertTrue(message.contains("deallocating"), message)
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }
}
