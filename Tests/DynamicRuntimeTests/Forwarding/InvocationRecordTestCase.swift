// Shared set-up of the invocation record tests, split over two classes.
import TestSupport
import CDynamicRuntime
import Foundation
import Glibc
import XCTest
@testable import DynamicRuntime

/// A live-object baseline, a recorder class taking every argument type, and values for it.
class InvocationRecordTestCase: LiveObjectTestCase {
    static let allTypes = "v@:cCsSiIqQfdB*@#:^v{Point=dd}{Rect={Point=dd}{Size=dd}}"

    /// A class with `all:…` taking every argument type, recording what it received.
    func makeRecorder(_ seen: Locked<[String]>) throws -> RuntimeClass {
        let cls = try makeClass("InvRecorder")
        try cls.addMethod("all", types: Self.allTypes) { _, args in
            let sig = try Signature(Self.allTypes)
            let values = (2..<sig.argumentTypes.count).map {
                fwdFingerprint(DynamicValue.load(sig.argumentTypes[$0], from: args[$0]!, isReturn: false))
            }
            seen.withLock { $0.append(values.joined(separator: " ")) }
        }
        return cls
    }

    struct Values {
        let other: Object
        let cls: RuntimeClass
        let text = fwdStaticCString("text")
        let pointer = UnsafeRawPointer(bitPattern: 0xDEAD_BEE0)!
        let point = Point(x: -1.5, y: 2.25)
        let rect = FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4))
    }

    func fill(_ inv: Invocation, _ v: Values) throws {
        try inv.setArgument(Int8.min, at: 0)
        try inv.setArgument(UInt8.max, at: 1)
        try inv.setArgument(Int16.min, at: 2)
        try inv.setArgument(UInt16.max, at: 3)
        try inv.setArgument(Int32.min, at: 4)
        try inv.setArgument(UInt32.max, at: 5)
        try inv.setArgument(Int.min, at: 6)
        try inv.setArgument(UInt64.max, at: 7)
        try inv.setArgument(Float(-0.5), at: 8)
        try inv.setArgument(Double.pi, at: 9)
        try inv.setArgument(true, at: 10)
        try inv.setArgument(v.text, at: 11)
        try inv.setArgument(v.other.ref, at: 12)
        try inv.setArgument(ClassRef(v.cls), at: 13)
        try inv.setArgument(Selector("some:selector:"), at: 14)
        try inv.setArgument(v.pointer, at: 15)
        try inv.setArgument(v.point, at: 16)
        try inv.setArgument(v.rect, at: 17)
    }
}
