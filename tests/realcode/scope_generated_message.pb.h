// expect: clean
// A generated message class (the shape protoc writes) with a field named `ret`: unrelated to
// scope_global_return_code.cpp, whose findings must not change when both are checked together.
#include <cstdint>
namespace proto {
class Reply {
public:
    int32_t ret() const { return ret_; }
    void set_ret(int32_t value) { ret_ = value; }

private:
    int32_t ret_ = 0;
};
}  // namespace proto
