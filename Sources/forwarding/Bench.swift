import ArgumentParser
import DynamicRuntime

/// `forwarding bench`: what each layer costs against a direct C call.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Measure forwarding overhead layer by layer.")

    func run() throws {
        print("bench: not built yet")
    }
}
