/// The last `capacity` ids seen, to drop an event the provider sends twice.
struct RecentIDs {
    let capacity: Int
    private var members: Set<String> = []
    private var order: [String] = []

    init(capacity: Int) { self.capacity = capacity }

    /// False when `id` was already seen.
    mutating func insert(_ id: String) -> Bool {
        guard members.insert(id).inserted else { return false }
        order.append(id)
        if order.count > capacity { members.remove(order.removeFirst()) }
        return true
    }
}
