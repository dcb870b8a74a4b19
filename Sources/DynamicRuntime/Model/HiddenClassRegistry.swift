import CDynamicRuntime
import Glibc

/// Hidden per-object subclasses are torn down with their object. Hooks install the handler.
enum HiddenClassRegistry {
    nonisolated(unsafe) static var onObjectDeallocated: ((sf_id, RuntimeClass) -> Void)?

    static func objectDeallocated(_ obj: sf_id, hiddenClass: RuntimeClass) {
        onObjectDeallocated?(obj, hiddenClass)
    }
}
