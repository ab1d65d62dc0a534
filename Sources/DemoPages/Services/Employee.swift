import JSONPatch
import MVVMR

/// One employee of the employees page, with the field names of the data file.
public struct Employee: Sendable, Hashable, Codable {
    /// The employee's id, unique in the list.
    public let id: Int
    /// The full name (`employee_name`).
    public let name: String
    /// The yearly salary (`employee_salary`).
    public let salary: Int
    /// The age in years (`employee_age`).
    public let age: Int
    /// The address of a picture, often empty (`profile_image`).
    public let profileImage: String

    /// An employee.
    /// - Parameters:
    ///   - id: unique in the list.
    ///   - name: the full name.
    ///   - salary: the yearly salary.
    ///   - age: the age in years.
    ///   - profileImage: the address of a picture, or "".
    public init(id: Int, name: String, salary: Int, age: Int, profileImage: String = "") {
        self.id = id
        self.name = name
        self.salary = salary
        self.age = age
        self.profileImage = profileImage
    }

    /// Reads one element of the data file; nil when a field is missing or has the wrong type.
    /// - Parameter json: an object with `id`, `employee_name`, `employee_salary`, `employee_age` and
    ///   optionally `profile_image`.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.intValue,
            let name = json["employee_name"]?.stringValue,
            let salary = json["employee_salary"]?.intValue,
            let age = json["employee_age"]?.intValue
        else { return nil }
        self.init(id: id, name: name, salary: salary, age: age, profileImage: json["profile_image"]?.stringValue ?? "")
    }

    /// The view's names for the members, as the data file spells them.
    enum CodingKeys: String, CodingKey {
        case id, name = "employee_name", salary = "employee_salary", age = "employee_age", profileImage = "profile_image"
    }
}
