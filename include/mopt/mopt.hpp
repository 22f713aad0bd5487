/*
 * mopt.hpp — a header-only C++17 wrapper over the C API in mopt.h.
 *
 * It adds ownership and exceptions, nothing else: every class holds the same
 * opaque handle the C API hands out, every destructor calls the matching
 * *_destroy, and every failing call throws mopt::error carrying the
 * mopt_status and the mopt_last_error() message. No state of its own, no
 * symbols of its own: it compiles against any libmopt with the same ABI.
 *
 *   #include <mopt/mopt.hpp>
 *
 *   mopt::options opts;
 *   opts.set("threads", 1);
 *   mopt::model model = mopt::model::load("model.onnx", &opts);
 *   mopt::session session(model, &opts);
 *   std::vector<float> pixels(1 * 3 * 32 * 32);
 *   mopt::tensor in = mopt::tensor::wrap(pixels, {1, 3, 32, 32});  // no copy
 *   std::vector<mopt::tensor> out = session.run({in});
 *   std::vector<float> logits = out[0].to_vector<float>();
 *
 * Rules it adds to mopt.h's:
 *   - options, model, session and tensor are move-only owners; a moved-from
 *     object is empty (get() == nullptr) and its destructor does nothing.
 *   - A session keeps its model's handle alive: the C rule "destroy every
 *     session before its model" holds whatever order the C++ objects die in
 *     (mopt_model_destroy runs when the model and its last session are gone).
 *   - tensor_view / const_tensor_view are non-owning: they never destroy. A
 *     tensor made by wrap() borrows the caller's buffer, which must outlive it.
 *   - Threading is the C API's: a model may be shared by any number of
 *     threads and sessions; a session, options or tensor is used by one thread
 *     at a time.
 *   - model::pass_report, session::stat and session::profile wrap the
 *     experimental calls of mopt.h: define MOPT_EXPERIMENTAL_API before
 *     including this header to have them.
 */
#ifndef MOPT_MOPT_HPP
#define MOPT_MOPT_HPP

#include <mopt/mopt.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mopt {

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Thrown by every wrapper call whose C function failed. what() is
 * "<status string>: <message>"; message() is mopt_last_error() as it was
 * right after the failing call (copied: later calls do not change it). */
class error : public std::runtime_error {
  public:
    error(mopt_status status, const std::string &message)
        : std::runtime_error(std::string(mopt_status_string(status)) + ": " + message),
          status_(status), message_(message) {}
    mopt_status status() const noexcept { return status_; }
    const std::string &message() const noexcept { return message_; }

  private:
    mopt_status status_;
    std::string message_;
};

namespace detail {
/* Throws mopt::error for a failing status, with this thread's last error. */
inline void check(mopt_status status) {
    if (status != MOPT_OK) {
        const char *msg = mopt_last_error();
        throw error(status, msg ? msg : "");
    }
}
/* An error raised by the wrapper itself (no C call failed). */
[[noreturn]] inline void fail(mopt_status status, const std::string &message) {
    throw error(status, message);
}
inline std::string str_or_empty(const char *s) { return s ? std::string(s) : std::string(); }
} // namespace detail

/* ------------------------------------------------------------------------ */
/* Version and element types                                                 */
/* ------------------------------------------------------------------------ */

/* The library's version string and number (compare with MOPT_VERSION_NUMBER
 * to check that header and library match). */
inline std::string version() { return detail::str_or_empty(mopt_version()); }
inline int version_number() noexcept { return mopt_version_number(); }

/* The mopt_dtype of a C++ element type (float -> MOPT_DTYPE_F32, ...). bool
 * maps to MOPT_DTYPE_BOOL (one byte, 0 or 1). F16/BF16 have no C++17 type:
 * use the untyped data() accessors for them. */
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr mopt_dtype value = MOPT_DTYPE_F32; };
template <> struct dtype_of<double> { static constexpr mopt_dtype value = MOPT_DTYPE_F64; };
template <> struct dtype_of<int8_t> { static constexpr mopt_dtype value = MOPT_DTYPE_I8; };
template <> struct dtype_of<uint8_t> { static constexpr mopt_dtype value = MOPT_DTYPE_U8; };
template <> struct dtype_of<int16_t> { static constexpr mopt_dtype value = MOPT_DTYPE_I16; };
template <> struct dtype_of<uint16_t> { static constexpr mopt_dtype value = MOPT_DTYPE_U16; };
template <> struct dtype_of<int32_t> { static constexpr mopt_dtype value = MOPT_DTYPE_I32; };
template <> struct dtype_of<uint32_t> { static constexpr mopt_dtype value = MOPT_DTYPE_U32; };
template <> struct dtype_of<int64_t> { static constexpr mopt_dtype value = MOPT_DTYPE_I64; };
template <> struct dtype_of<uint64_t> { static constexpr mopt_dtype value = MOPT_DTYPE_U64; };
template <> struct dtype_of<bool> { static constexpr mopt_dtype value = MOPT_DTYPE_BOOL; };
template <class T> constexpr mopt_dtype dtype_of_v = dtype_of<std::remove_cv_t<T>>::value;

inline std::string dtype_name(mopt_dtype dtype) {
    return detail::str_or_empty(mopt_dtype_name(dtype));
}
inline std::size_t dtype_size(mopt_dtype dtype) noexcept { return mopt_dtype_size(dtype); }

/* A contiguous run of T that the wrapper does not own (C++17 has no
 * std::span): built from a pointer and a count, a std::vector or a
 * std::array. Used to pass caller buffers without copying. */
template <class T> class span {
  public:
    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <class U, class A,
              class = std::enable_if_t<std::is_same<std::remove_const_t<T>, U>::value>>
    span(std::vector<U, A> &v) noexcept : data_(v.data()), size_(v.size()) {}
    template <class U, class A,
              class = std::enable_if_t<std::is_const<T>::value &&
                                       std::is_same<std::remove_const_t<T>, U>::value>>
    span(const std::vector<U, A> &v) noexcept : data_(v.data()), size_(v.size()) {}
    template <class U, std::size_t N,
              class = std::enable_if_t<std::is_same<std::remove_const_t<T>, U>::value>>
    span(std::array<U, N> &a) noexcept : data_(a.data()), size_(N) {}
    template <class U, std::size_t N,
              class = std::enable_if_t<std::is_const<T>::value &&
                                       std::is_same<std::remove_const_t<T>, U>::value>>
    span(const std::array<U, N> &a) noexcept : data_(a.data()), size_(N) {}
    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

  private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

/* A tensor shape: one entry per axis. */
using shape = std::vector<int64_t>;

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

/* Key/value options (see mopt.h for the keys). Move-only; one thread at a
 * time. Setters return *this so calls chain. */
class options {
  public:
    options() {
        mopt_options *raw = nullptr;
        detail::check(mopt_options_create(&raw));
        handle_.reset(raw);
    }
    /* Takes ownership of a handle from the C API (may be nullptr). */
    explicit options(mopt_options *raw) noexcept : handle_(raw) {}

    options &set(const char *key, int64_t value) {
        detail::check(mopt_options_set_int(get(), key, value));
        return *this;
    }
    options &set(const char *key, int value) { return set(key, static_cast<int64_t>(value)); }
    options &set(const char *key, double value) {
        detail::check(mopt_options_set_double(get(), key, value));
        return *this;
    }
    options &set(const char *key, const char *value) {
        detail::check(mopt_options_set_string(get(), key, value));
        return *this;
    }
    options &set(const char *key, const std::string &value) { return set(key, value.c_str()); }

    int64_t get_int(const char *key) const {
        int64_t v = 0;
        detail::check(mopt_options_get_int(get(), key, &v));
        return v;
    }
    double get_double(const char *key) const {
        double v = 0;
        detail::check(mopt_options_get_double(get(), key, &v));
        return v;
    }
    std::string get_string(const char *key) const {
        const char *v = nullptr;
        detail::check(mopt_options_get_string(get(), key, &v));
        return detail::str_or_empty(v);
    }
    options &load_yaml(const std::string &path) {
        detail::check(mopt_options_load_yaml(get(), path.c_str()));
        return *this;
    }
    options &load_yaml_string(const std::string &text) {
        detail::check(mopt_options_load_yaml_string(get(), text.data(), text.size()));
        return *this;
    }

    mopt_options *get() const noexcept { return handle_.get(); }
    /* Gives the handle up; the caller destroys it. */
    mopt_options *release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

  private:
    struct deleter {
        void operator()(mopt_options *p) const noexcept { mopt_options_destroy(p); }
    };
    std::unique_ptr<mopt_options, deleter> handle_;
};

/* ------------------------------------------------------------------------ */
/* Tensors                                                                   */
/* ------------------------------------------------------------------------ */

namespace detail {
/* The accessors shared by tensor, tensor_view and const_tensor_view. */
template <class Derived> class tensor_reader {
  public:
    mopt_dtype dtype() const noexcept { return mopt_tensor_dtype(raw()); }
    int rank() const noexcept { return mopt_tensor_rank(raw()); }
    int64_t dim(int axis) const noexcept { return mopt_tensor_dim(raw(), axis); }
    mopt::shape dims() const {
        const int64_t *d = mopt_tensor_dims(raw());
        int r = rank();
        return d && r > 0 ? mopt::shape(d, d + r) : mopt::shape();
    }
    int64_t element_count() const noexcept { return mopt_tensor_element_count(raw()); }
    std::size_t size_bytes() const noexcept { return mopt_tensor_size_bytes(raw()); }
    const void *data() const noexcept { return mopt_tensor_data_const(raw()); }
    /* The elements as T; throws TYPE when T is not the tensor's dtype. */
    template <class T> const T *data_as() const {
        check_type<T>();
        return static_cast<const T *>(data());
    }
    template <class T> span<const T> values() const {
        return span<const T>(data_as<T>(), static_cast<std::size_t>(element_count()));
    }
    template <class T> std::vector<T> to_vector() const {
        span<const T> v = values<T>();
        return std::vector<T>(v.begin(), v.end());
    }
    /* Writes the tensor as a NumPy .npy file. */
    void save_npy(const std::string &path) const {
        detail::check(mopt_tensor_save_npy(raw(), path.c_str()));
    }

  protected:
    template <class T> void check_type() const {
        if (dtype_of_v<T> != dtype())
            detail::fail(MOPT_ERR_TYPE, "tensor holds " + dtype_name(dtype()) + ", not " +
                                            dtype_name(dtype_of_v<T>));
    }

  private:
    const mopt_tensor *raw() const noexcept { return static_cast<const Derived *>(this)->get(); }
};
} // namespace detail

class tensor;

/* A non-owning, writable view of a tensor someone else owns: what a session
 * writes a result into. Never destroys the tensor. */
class tensor_view : public detail::tensor_reader<tensor_view> {
  public:
    explicit tensor_view(mopt_tensor *raw) noexcept : raw_(raw) {}
    tensor_view(tensor &t) noexcept; // defined after tensor
    mopt_tensor *get() const noexcept { return raw_; }
    void *mutable_data() const noexcept { return mopt_tensor_data(raw_); }
    template <class T> T *mutable_data_as() const {
        this->check_type<T>();
        return static_cast<T *>(mutable_data());
    }

  private:
    mopt_tensor *raw_;
};

/* A non-owning, read-only view of a tensor someone else owns: what a
 * session reads an input from. Never destroys the tensor. */
class const_tensor_view : public detail::tensor_reader<const_tensor_view> {
  public:
    explicit const_tensor_view(const mopt_tensor *raw) noexcept : raw_(raw) {}
    const_tensor_view(const tensor &t) noexcept; // defined after tensor
    const_tensor_view(tensor_view v) noexcept : raw_(v.get()) {}
    const mopt_tensor *get() const noexcept { return raw_; }

  private:
    const mopt_tensor *raw_;
};

/* An owned tensor: its own zero-filled buffer (tensor(dtype, dims)), a copy
 * of caller data (copy_of), a borrowed caller buffer (wrap: zero copy), a
 * file (load), or a session's output. Move-only. */
class tensor : public detail::tensor_reader<tensor> {
  public:
    /* An empty handle (get() == nullptr). */
    tensor() noexcept = default;
    /* Takes ownership of a handle from the C API (may be nullptr). */
    explicit tensor(mopt_tensor *raw) noexcept : handle_(raw) {}
    /* A zero-filled tensor that owns a 64-byte aligned buffer. */
    tensor(mopt_dtype dtype, const mopt::shape &dims) {
        mopt_tensor *raw = nullptr;
        detail::check(mopt_tensor_create(dtype, rank_of(dims), dims.data(), &raw));
        handle_.reset(raw);
    }

    /* Borrows size bytes at data as a tensor of this dtype and shape, without
     * copying. The buffer must outlive the tensor. A tensor wrapping const
     * data is read-only: mutable_data() throws INVALID_ARGUMENT (a session
     * never writes its inputs). */
    static tensor wrap(mopt_dtype dtype, const mopt::shape &dims, void *data, std::size_t size) {
        return wrap_raw(dtype, dims, data, size, false);
    }
    static tensor wrap(mopt_dtype dtype, const mopt::shape &dims, const void *data,
                       std::size_t size) {
        return wrap_raw(dtype, dims, const_cast<void *>(data), size, true);
    }
    template <class T> static tensor wrap(span<T> values, const mopt::shape &dims) {
        return wrap_raw(dtype_of_v<T>, dims,
                        const_cast<void *>(static_cast<const void *>(values.data())),
                        values.size() * sizeof(T), std::is_const<T>::value);
    }
    template <class T, class A>
    static tensor wrap(std::vector<T, A> &values, const mopt::shape &dims) {
        return wrap(span<T>(values), dims);
    }
    template <class T, class A>
    static tensor wrap(const std::vector<T, A> &values, const mopt::shape &dims) {
        return wrap(span<const T>(values), dims);
    }
    /* An owned tensor holding a copy of values. */
    template <class T> static tensor copy_of(span<const T> values, const mopt::shape &dims) {
        tensor t(dtype_of_v<T>, dims);
        if (static_cast<std::size_t>(t.element_count()) != values.size())
            detail::fail(MOPT_ERR_INVALID_ARGUMENT,
                         "copy_of: " + std::to_string(values.size()) + " values for a shape of " +
                             std::to_string(t.element_count()) + " elements");
        if (!values.empty()) std::memcpy(t.mutable_data(), values.data(), t.size_bytes());
        return t;
    }
    template <class T, class A>
    static tensor copy_of(const std::vector<T, A> &values, const mopt::shape &dims) {
        return copy_of(span<const T>(values), dims);
    }
    /* Reads a .npy or ONNX TensorProto file. */
    static tensor load(const std::string &path) {
        mopt_tensor *raw = nullptr;
        detail::check(mopt_tensor_load(path.c_str(), &raw));
        return tensor(raw);
    }

    void *mutable_data() {
        if (read_only_)
            detail::fail(MOPT_ERR_INVALID_ARGUMENT, "tensor wraps a read-only (const) buffer");
        return mopt_tensor_data(handle_.get());
    }
    template <class T> T *mutable_data_as() {
        this->check_type<T>();
        return static_cast<T *>(mutable_data());
    }
    bool read_only() const noexcept { return read_only_; }

    mopt_tensor *get() const noexcept { return handle_.get(); }
    mopt_tensor *release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_ != nullptr; }
    tensor_view view() noexcept { return tensor_view(*this); }

    tensor(tensor &&other) noexcept
        : handle_(std::move(other.handle_)), read_only_(std::exchange(other.read_only_, false)) {}
    tensor &operator=(tensor &&other) noexcept {
        handle_ = std::move(other.handle_);
        read_only_ = std::exchange(other.read_only_, false);
        return *this;
    }

  private:
    static int rank_of(const mopt::shape &dims) {
        if (dims.size() > static_cast<std::size_t>(MOPT_MAX_RANK))
            detail::fail(MOPT_ERR_INVALID_ARGUMENT, "tensor rank " + std::to_string(dims.size()) +
                                                        " is above " +
                                                        std::to_string(MOPT_MAX_RANK));
        return static_cast<int>(dims.size());
    }
    static tensor wrap_raw(mopt_dtype dtype, const mopt::shape &dims, void *data, std::size_t size,
                           bool read_only) {
        mopt_tensor *raw = nullptr;
        detail::check(mopt_tensor_wrap(dtype, rank_of(dims), dims.data(), data, size, &raw));
        tensor t(raw);
        t.read_only_ = read_only;
        return t;
    }
    struct deleter {
        void operator()(mopt_tensor *p) const noexcept { mopt_tensor_destroy(p); }
    };
    std::unique_ptr<mopt_tensor, deleter> handle_;
    bool read_only_ = false;
};

inline tensor_view::tensor_view(tensor &t) noexcept : raw_(t.get()) {}
inline const_tensor_view::const_tensor_view(const tensor &t) noexcept : raw_(t.get()) {}

/* ------------------------------------------------------------------------ */
/* Models                                                                    */
/* ------------------------------------------------------------------------ */

/* One graph input or output as the model declares it. dims[i] is -1 for a
 * symbolic or unknown dimension, whose name (if any) is dim_names[i]. rank
 * is -1 (and dims empty) when unknown. */
struct io_info {
    std::string name;
    mopt_dtype dtype = MOPT_DTYPE_UNDEFINED;
    int rank = -1;
    mopt::shape dims;
    std::vector<std::string> dim_names;
};

/* A loaded, optimized, immutable model. Move-only; shareable across threads
 * (a const model& may be used by many threads at once). */
class model {
  public:
    model() noexcept = default;
    /* Takes ownership of a handle from the C API (may be nullptr). */
    explicit model(mopt_model *raw) : handle_(raw, deleter{}) {}

    static model load(const std::string &path, const options *opts = nullptr) {
        mopt_model *raw = nullptr;
        detail::check(mopt_model_load(path.c_str(), opts ? opts->get() : nullptr, &raw));
        return model(raw);
    }
    static model load_from_memory(const void *data, std::size_t size,
                                  const options *opts = nullptr) {
        mopt_model *raw = nullptr;
        detail::check(mopt_model_load_from_memory(data, size, opts ? opts->get() : nullptr, &raw));
        return model(raw);
    }
    void save(const std::string &path) const {
        detail::check(mopt_model_save(get(), path.c_str()));
    }
#ifdef MOPT_EXPERIMENTAL_API
    std::string pass_report() const { return detail::str_or_empty(mopt_model_pass_report(get())); }
#endif

    std::size_t input_count() const noexcept { return mopt_model_io_count(get(), MOPT_INPUT); }
    std::size_t output_count() const noexcept { return mopt_model_io_count(get(), MOPT_OUTPUT); }
    io_info input(std::size_t index) const { return info(MOPT_INPUT, index); }
    io_info output(std::size_t index) const { return info(MOPT_OUTPUT, index); }
    std::vector<io_info> inputs() const { return infos(MOPT_INPUT); }
    std::vector<io_info> outputs() const { return infos(MOPT_OUTPUT); }
    /* Index of the input/output of that name; throws NOT_FOUND. */
    std::size_t find_input(const std::string &name) const { return find(MOPT_INPUT, name); }
    std::size_t find_output(const std::string &name) const { return find(MOPT_OUTPUT, name); }

    std::size_t node_count() const noexcept { return mopt_model_node_count(get()); }
    std::string node_op_type(std::size_t i) const {
        return detail::str_or_empty(mopt_model_node_op_type(get(), i));
    }
    std::string node_name(std::size_t i) const {
        return detail::str_or_empty(mopt_model_node_name(get(), i));
    }
    int64_t opset(const std::string &domain = "") const noexcept {
        return mopt_model_opset(get(), domain.c_str());
    }
    int64_t parameter_count() const noexcept { return mopt_model_parameter_count(get()); }
    int64_t parameter_bytes() const noexcept { return mopt_model_parameter_bytes(get()); }

    const mopt_model *get() const noexcept { return handle_.get(); }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    model(model &&) noexcept = default;
    model &operator=(model &&) noexcept = default;
    model(const model &) = delete;
    model &operator=(const model &) = delete;

  private:
    friend class session;
    struct deleter {
        void operator()(mopt_model *p) const noexcept { mopt_model_destroy(p); }
    };
    io_info info(mopt_io_kind kind, std::size_t index) const {
        if (index >= mopt_model_io_count(get(), kind))
            detail::fail(MOPT_ERR_INVALID_ARGUMENT,
                         std::string(kind == MOPT_INPUT ? "input" : "output") + " index " +
                             std::to_string(index) + " is out of range");
        io_info r;
        r.name = detail::str_or_empty(mopt_model_io_name(get(), kind, index));
        r.dtype = mopt_model_io_dtype(get(), kind, index);
        r.rank = mopt_model_io_rank(get(), kind, index);
        for (int a = 0; a < r.rank; a++) {
            r.dims.push_back(mopt_model_io_dim(get(), kind, index, a));
            r.dim_names.push_back(
                detail::str_or_empty(mopt_model_io_dim_name(get(), kind, index, a)));
        }
        return r;
    }
    std::vector<io_info> infos(mopt_io_kind kind) const {
        std::vector<io_info> r;
        for (std::size_t i = 0, n = mopt_model_io_count(get(), kind); i < n; i++)
            r.push_back(info(kind, i));
        return r;
    }
    std::size_t find(mopt_io_kind kind, const std::string &name) const {
        std::size_t index = 0;
        detail::check(mopt_model_io_find(get(), kind, name.c_str(), &index));
        return index;
    }
    /* Shared with the sessions created from this model, so that the model is
     * destroyed only after them. */
    std::shared_ptr<mopt_model> handle_;
};

/* ------------------------------------------------------------------------ */
/* Sessions                                                                  */
/* ------------------------------------------------------------------------ */

#ifdef MOPT_EXPERIMENTAL_API
/* One node's entry in a session's profile of its last run. */
struct profile_entry {
    std::string node, op, kernel;
    int64_t ns = 0, flops = 0;
};
#endif

/* Per-caller execution state for one model. Move-only; driven by one thread
 * at a time. It keeps the model's handle alive (see the rules on top). */
class session {
  public:
    session() noexcept = default;
    explicit session(const model &m, const options *opts = nullptr) : model_(m.handle_) {
        if (!model_) detail::fail(MOPT_ERR_INVALID_ARGUMENT, "session: the model is empty");
        mopt_session *raw = nullptr;
        detail::check(mopt_session_create(model_.get(), opts ? opts->get() : nullptr, &raw));
        handle_.reset(raw);
    }

    /* Runs with the inputs in model order; the library allocates every
     * output, returned in model order. */
    std::vector<tensor> run(const std::vector<const_tensor_view> &inputs) {
        std::vector<mopt_tensor *> outs(mopt_model_io_count(model_.get(), MOPT_OUTPUT), nullptr);
        return run_raw(nullptr, inputs, nullptr, outs);
    }
    std::vector<tensor> run(std::initializer_list<const_tensor_view> inputs) {
        return run(std::vector<const_tensor_view>(inputs));
    }
    /* Runs with named inputs and returns the named outputs, in the order of
     * output_names (an empty list: every output in model order). */
    std::vector<tensor> run(const std::vector<std::pair<std::string, const_tensor_view>> &inputs,
                            const std::vector<std::string> &output_names) {
        std::vector<const char *> in_names;
        std::vector<const_tensor_view> in_views;
        for (const auto &p : inputs) {
            in_names.push_back(p.first.c_str());
            in_views.push_back(p.second);
        }
        std::vector<const char *> out_names;
        for (const auto &n : output_names)
            out_names.push_back(n.c_str());
        std::size_t n_out = output_names.empty() ? mopt_model_io_count(model_.get(), MOPT_OUTPUT)
                                                 : output_names.size();
        std::vector<mopt_tensor *> outs(n_out, nullptr);
        return run_raw(in_names.data(), in_views, output_names.empty() ? nullptr : out_names.data(),
                       outs);
    }
    /* Runs writing every output, in model order, into caller tensors (owned
     * or wrapping caller buffers) whose dtype and shape must match: zero
     * copy in and out. */
    void run_into(const std::vector<const_tensor_view> &inputs,
                  const std::vector<tensor_view> &outputs) {
        std::vector<mopt_tensor *> outs;
        for (const auto &o : outputs) {
            if (!o.get()) detail::fail(MOPT_ERR_INVALID_ARGUMENT, "run_into: an output is empty");
            outs.push_back(o.get());
        }
        std::vector<tensor> handed = run_raw(nullptr, inputs, nullptr, outs);
        (void)handed; // every slot was a caller tensor: nothing is handed over
    }

#ifdef MOPT_EXPERIMENTAL_API /* statistics and profiles may still change */
    /* A statistic by key ("runs", "peak_bytes", "arena_bytes", "last_run_ns"). */
    int64_t stat(const char *key) const {
        int64_t v = 0;
        detail::check(mopt_session_get_stat(get(), key, &v));
        return v;
    }
    /* The per-node profile of the last run (empty when profiling is off). */
    std::vector<profile_entry> profile() const {
        std::vector<profile_entry> r;
        for (std::size_t i = 0, n = mopt_session_profile_count(get()); i < n; i++) {
            profile_entry e;
            e.node = detail::str_or_empty(mopt_session_profile_node(get(), i));
            e.op = detail::str_or_empty(mopt_session_profile_op(get(), i));
            e.kernel = detail::str_or_empty(mopt_session_profile_kernel(get(), i));
            e.ns = mopt_session_profile_ns(get(), i);
            e.flops = mopt_session_profile_flops(get(), i);
            r.push_back(std::move(e));
        }
        return r;
    }
#endif

    mopt_session *get() const noexcept { return handle_.get(); }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    session(session &&) noexcept = default;
    /* The old session (if any) is destroyed before the old model reference
     * is dropped. */
    session &operator=(session &&other) noexcept {
        if (this != &other) {
            handle_ = std::move(other.handle_);
            model_ = std::move(other.model_);
        }
        return *this;
    }
    session(const session &) = delete;
    session &operator=(const session &) = delete;

  private:
    std::vector<tensor> run_raw(const char *const *in_names,
                                const std::vector<const_tensor_view> &inputs,
                                const char *const *out_names, std::vector<mopt_tensor *> &outs) {
        if (!handle_) detail::fail(MOPT_ERR_INVALID_ARGUMENT, "run: the session is empty");
        std::vector<const mopt_tensor *> ins;
        for (const auto &v : inputs)
            ins.push_back(v.get());
        std::vector<mopt_tensor *> before = outs;
        std::vector<tensor> r;
        r.reserve(outs.size()); // nothing may throw once outputs are handed over
        detail::check(mopt_session_run(get(), ins.size(), in_names, ins.data(), outs.size(),
                                       out_names, outs.data()));
        for (std::size_t i = 0; i < outs.size(); i++)
            if (!before[i]) r.emplace_back(outs[i]); // handed over by the library
        return r;
    }
    struct deleter {
        void operator()(mopt_session *p) const noexcept { mopt_session_destroy(p); }
    };
    /* Declared first so that it is destroyed last: the session goes before
     * its reference on the model. */
    std::shared_ptr<mopt_model> model_;
    std::unique_ptr<mopt_session, deleter> handle_;
};

} // namespace mopt

#endif /* MOPT_MOPT_HPP */
