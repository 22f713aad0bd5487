// models.rs — the safe crate against the C API and the model corpus: the
// bundled models (tests/models) run through `mopt` give the same bits as the
// same run through raw mopt-sys calls and match the ONNX Runtime references;
// zero-copy inputs and outputs really are the caller's memory; errors carry
// the C status and message; models are shared across threads; and the
// Send/Sync markers follow the C threading rules.
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr;

use mopt::{sys, AsTensor, DType, Dim, Error, Model, Options, Tensor, TensorMut, TensorRef};

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/models")
}
fn model_path(name: &str) -> PathBuf {
    models().join(name).join("model.onnx")
}
fn data(name: &str, file: &str) -> PathBuf {
    models().join(name).join("test_data_set_0").join(file)
}

fn one_thread() -> Options {
    let mut o = Options::new().unwrap();
    o.set_int("threads", 1).unwrap();
    o
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The oracle: the model run through raw C calls, one thread, inputs in model
/// order, every output allocated by the library (all f32 in the corpus).
fn c_api_run(model: &str, inputs: &[&str]) -> Vec<Vec<f32>> {
    unsafe {
        let mut opts = ptr::null_mut();
        assert_eq!(sys::mopt_options_create(&mut opts), sys::MOPT_OK);
        let key = CString::new("threads").unwrap();
        assert_eq!(
            sys::mopt_options_set_int(opts, key.as_ptr(), 1),
            sys::MOPT_OK
        );
        let path = CString::new(model_path(model).to_str().unwrap()).unwrap();
        let mut m = ptr::null_mut();
        assert_eq!(
            sys::mopt_model_load(path.as_ptr(), opts, &mut m),
            sys::MOPT_OK
        );
        let mut s = ptr::null_mut();
        assert_eq!(sys::mopt_session_create(m, opts, &mut s), sys::MOPT_OK);
        let mut ins = Vec::new();
        for f in inputs {
            let p = CString::new(data(model, f).to_str().unwrap()).unwrap();
            let mut t = ptr::null_mut();
            assert_eq!(sys::mopt_tensor_load(p.as_ptr(), &mut t), sys::MOPT_OK);
            ins.push(t as *const sys::mopt_tensor);
        }
        let n_out = sys::mopt_model_io_count(m, sys::MOPT_OUTPUT);
        let mut outs = vec![ptr::null_mut(); n_out];
        let st = sys::mopt_session_run(
            s,
            ins.len(),
            ptr::null(),
            ins.as_ptr(),
            n_out,
            ptr::null(),
            outs.as_mut_ptr(),
        );
        assert_eq!(st, sys::MOPT_OK);
        let r = outs
            .iter()
            .map(|&t| {
                let p = sys::mopt_tensor_data_const(t) as *const f32;
                let v = std::slice::from_raw_parts(p, sys::mopt_tensor_element_count(t) as usize)
                    .to_vec();
                sys::mopt_tensor_destroy(t);
                v
            })
            .collect();
        for t in ins {
            sys::mopt_tensor_destroy(t as *mut _);
        }
        sys::mopt_session_destroy(s);
        sys::mopt_model_destroy(m);
        sys::mopt_options_destroy(opts);
        r
    }
}

#[test]
fn version_matches_header() {
    assert_eq!(mopt::version_number(), sys::MOPT_VERSION_NUMBER);
    let expect = format!(
        "{}.{}.{}",
        sys::MOPT_VERSION_MAJOR,
        sys::MOPT_VERSION_MINOR,
        sys::MOPT_VERSION_PATCH
    );
    assert_eq!(mopt::version(), expect);
    let ops = mopt::supported_ops();
    assert!(ops.iter().any(|o| o == "Conv") && ops.iter().any(|o| o == "MatMul"));
}

#[test]
fn cnn_matches_c_api_and_reference() {
    let c_out = c_api_run("cnn", &["input_0.npy"]);
    let opts = one_thread();
    let model = Model::load(model_path("cnn"), Some(&opts)).unwrap();
    let mut session = model.session(Some(&opts)).unwrap();
    let input = Tensor::load(data("cnn", "input_0.npy")).unwrap();
    let out = session.run(&[&input]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dims(), &[1, 10]);
    assert_eq!(out[0].dtype(), Some(DType::F32));
    let got = out[0].as_slice::<f32>().unwrap();
    assert_eq!(
        got,
        &c_out[0][..],
        "differs from the same run through the C API"
    );
    let reference = Tensor::load(data("cnn", "output_0.npy")).unwrap();
    let err = max_abs_diff(got, reference.as_slice().unwrap());
    assert!(
        err <= 1e-4,
        "max abs error {} against the ORT reference",
        err
    );
    assert_eq!(session.stat("runs").unwrap(), 1);
}

#[test]
fn bert_zero_copy_inputs_and_outputs() {
    let c_out = c_api_run("bert", &["input_0.npy", "input_1.npy"]);
    let opts = one_thread();
    let model = Model::load(model_path("bert"), Some(&opts)).unwrap();
    let mut session = model.session(Some(&opts)).unwrap();
    let ids: Vec<i64> = Tensor::load(data("bert", "input_0.npy"))
        .unwrap()
        .to_vec()
        .unwrap();
    let mask: Vec<i64> = Tensor::load(data("bert", "input_1.npy"))
        .unwrap()
        .to_vec()
        .unwrap();
    let ids_t = TensorRef::new(&ids, &[1, 8]).unwrap();
    let mask_t = TensorRef::new(&mask, &[1, 8]).unwrap();
    assert_eq!(
        ids_t.as_bytes().as_ptr(),
        ids.as_ptr() as *const u8,
        "input was copied"
    );

    // Named inputs in reverse order, only the second output.
    let pooled = session
        .run_named(
            &[("attention_mask", &mask_t), ("input_ids", &ids_t)],
            &["pooler_output"],
        )
        .unwrap();
    assert_eq!(pooled.len(), 1);
    assert_eq!(pooled[0].dims(), &[1, 64]);
    assert_eq!(pooled[0].as_slice::<f32>().unwrap(), &c_out[1][..]);

    // Every output straight into caller vectors.
    let mut hidden = vec![-1.0f32; 8 * 64];
    let mut pool = vec![-1.0f32; 64];
    {
        let mut hidden_t = TensorMut::new(&mut hidden, &[1, 8, 64]).unwrap();
        let mut pool_t = TensorMut::new(&mut pool, &[1, 64]).unwrap();
        session
            .run_into(&[&ids_t, &mask_t], &mut [&mut hidden_t, &mut pool_t])
            .unwrap();
        assert_eq!(hidden_t.as_slice::<f32>().unwrap(), &c_out[0][..]);
    }
    assert_eq!(hidden, c_out[0]);
    assert_eq!(pool, c_out[1]);
    let reference = Tensor::load(data("bert", "output_0.npy")).unwrap();
    assert!(max_abs_diff(&hidden, reference.as_slice().unwrap()) <= 1e-4);

    // By name, into caller buffers, outputs in reverse order.
    let mut pool2 = vec![0.0f32; 64];
    let mut hidden2 = Tensor::zeros(DType::F32, &[1, 8, 64]).unwrap();
    {
        let mut pool2_t = TensorMut::new(&mut pool2, &[1, 64]).unwrap();
        session
            .run_named_into(
                &[("input_ids", &ids_t), ("attention_mask", &mask_t)],
                &mut [
                    ("pooler_output", &mut pool2_t),
                    ("last_hidden_state", &mut hidden2),
                ],
            )
            .unwrap();
    }
    assert_eq!(pool2, c_out[1]);
    assert_eq!(hidden2.as_slice::<f32>().unwrap(), &c_out[0][..]);
    assert_eq!(session.stat("runs").unwrap(), 3);
}

#[test]
fn introspection() {
    let model = Model::load(model_path("bert"), None).unwrap();
    let inputs = model.inputs();
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[0].name, "input_ids");
    assert_eq!(inputs[1].name, "attention_mask");
    assert_eq!(inputs[0].dtype, Some(DType::I64));
    assert_eq!(
        inputs[0].dims,
        Some(vec![
            Dim::Symbolic(Some("batch".into())),
            Dim::Symbolic(Some("seq".into()))
        ])
    );
    let outputs = model.outputs();
    assert_eq!(outputs[0].name, "last_hidden_state");
    assert_eq!(outputs[0].dims.as_ref().unwrap()[2], Dim::Fixed(64));
    assert_eq!(model.find_input("attention_mask").unwrap(), 1);
    assert_eq!(model.find_output("pooler_output").unwrap(), 1);
    assert_eq!(model.opset(""), Some(17));
    assert_eq!(model.opset("com.example.none"), None);
    let nodes = model.nodes();
    assert_eq!(nodes.len(), unsafe {
        sys::mopt_model_node_count(model.as_ptr())
    });
    assert!(nodes.iter().all(|n| !n.op_type.is_empty()));
    assert!(model.parameter_count() > 100_000);
    assert!(model.parameter_bytes() >= 4 * model.parameter_count());
}

#[test]
fn errors_carry_status_and_c_message() {
    let missing = models().join("no_such_model.onnx");
    let c_msg = unsafe {
        let p = CString::new(missing.to_str().unwrap()).unwrap();
        let mut m = ptr::null_mut();
        assert_eq!(
            sys::mopt_model_load(p.as_ptr(), ptr::null(), &mut m),
            sys::MOPT_ERR_IO
        );
        CStr::from_ptr(sys::mopt_last_error())
            .to_str()
            .unwrap()
            .to_string()
    };
    let err = Model::load(&missing, None).unwrap_err();
    assert_eq!(err, Error::Io(c_msg.clone()));
    assert_eq!(err.status(), sys::MOPT_ERR_IO);
    assert!(err.message().contains("no_such_model.onnx"), "{}", err);
    let status_name = unsafe { CStr::from_ptr(sys::mopt_status_string(sys::MOPT_ERR_IO)) };
    assert_eq!(
        err.to_string(),
        format!("{}: {}", status_name.to_str().unwrap(), c_msg)
    );

    let mut opts = Options::new().unwrap();
    match opts.set_int("no_such_key", 1) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("no_such_key"), "{}", m),
        r => panic!("unknown key gave {:?}", r.map(|_| ())),
    }
    assert!(matches!(
        opts.set_str("threads", "many"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        opts.set_int("thr\0eads", 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        opts.get_int("backend"),
        Err(Error::InvalidArgument(_))
    ));

    let model = Model::load(model_path("cnn"), None).unwrap();
    let mut session = model.session(None).unwrap();
    let ints = vec![0i64; 3 * 32 * 32];
    let wrong_type = TensorRef::new(&ints, &[1, 3, 32, 32]).unwrap();
    assert!(matches!(session.run(&[&wrong_type]), Err(Error::Type(m)) if !m.is_empty()));
    let small = vec![0.0f32; 3 * 16 * 16];
    let wrong_shape = TensorRef::new(&small, &[1, 3, 16, 16]).unwrap();
    assert!(matches!(session.run(&[&wrong_shape]), Err(Error::Shape(_))));
    let pixels = vec![0.0f32; 3 * 32 * 32];
    let good = TensorRef::new(&pixels, &[1, 3, 32, 32]).unwrap();
    match session.run_named(&[("pixels", &good)], &["logits"]) {
        Err(Error::NotFound(m)) => assert!(m.contains("pixels"), "{}", m),
        r => panic!("unknown input gave {:?}", r),
    }
    match session.run_named(&[("input", &good)], &["nope"]) {
        Err(Error::NotFound(m)) => assert!(m.contains("nope"), "{}", m),
        r => panic!("unknown output gave {:?}", r),
    }
    assert!(matches!(model.find_input("nope"), Err(Error::NotFound(_))));
    // A caller output of the wrong shape is refused and left untouched.
    let mut out5 = vec![7.0f32; 5];
    {
        let mut out5_t = TensorMut::new(&mut out5, &[1, 5]).unwrap();
        assert!(matches!(
            session.run_into(&[&good], &mut [&mut out5_t]),
            Err(Error::Shape(_))
        ));
    }
    assert_eq!(out5, vec![7.0f32; 5]);
    assert_eq!(session.stat("runs").unwrap(), 0);
    assert!(matches!(
        session.stat("no_such_stat"),
        Err(Error::NotFound(_))
    ));

    // Errors the wrapper raises itself.
    let f = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    assert_eq!(
        f.to_vec::<i64>(),
        Err(Error::Type("tensor holds f32, not i64".into()))
    );
    assert!(matches!(
        Tensor::from_slice(&[1.0f32, 2.0], &[3]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        TensorRef::new(&ints, &[2, 2]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Tensor::zeros(DType::F32, &[1; 9]),
        Err(Error::InvalidArgument(_))
    ));
    let bytes = [0u8; 9];
    let misaligned = if (bytes.as_ptr() as usize) % 4 == 0 {
        &bytes[1..5]
    } else {
        &bytes[..4]
    };
    assert!(matches!(
        TensorRef::from_bytes(DType::F32, &[1], misaligned),
        Err(Error::InvalidArgument(m)) if m.contains("aligned")
    ));
}

#[test]
fn tensors() {
    let mut z = Tensor::zeros(DType::I32, &[2, 3]).unwrap();
    assert_eq!((z.len(), z.size_bytes(), z.dims()), (6, 24, &[2i64, 3][..]));
    assert_eq!(z.to_vec::<i32>().unwrap(), vec![0; 6]);
    z.as_mut_slice::<i32>().unwrap()[4] = 42;
    assert_eq!(z.as_slice::<i32>().unwrap()[4], 42);
    let scalar = Tensor::zeros(DType::F64, &[]).unwrap();
    assert_eq!((scalar.len(), scalar.dims().len()), (1, 0));
    let flags = [1u8, 0, 1];
    let b = TensorRef::from_bytes(DType::Bool, &[3], &flags).unwrap();
    assert_eq!((b.dtype(), b.as_bytes()), (Some(DType::Bool), &flags[..]));
    assert!(matches!(b.as_slice::<u8>(), Err(Error::Type(_))));

    let dir = std::env::temp_dir().join(format!("mopt-rust-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("z.npy");
    z.save_npy(&file).unwrap();
    let back = Tensor::load(&file).unwrap();
    assert_eq!(back.dims(), z.dims());
    assert_eq!(
        back.as_slice::<i32>().unwrap(),
        z.as_slice::<i32>().unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn options_round_trip() {
    let mut o = Options::new().unwrap();
    assert_eq!(o.get_str("backend").unwrap(), "auto");
    o.set_int("threads", 3)
        .unwrap()
        .set_str("backend", "ref")
        .unwrap();
    assert_eq!(o.get_int("threads").unwrap(), 3);
    assert_eq!(o.get_str("backend").unwrap(), "ref");
    o.load_yaml_str("threads: 2\nopt_level: 1\n").unwrap();
    assert_eq!(
        (
            o.get_int("threads").unwrap(),
            o.get_int("opt_level").unwrap()
        ),
        (2, 1)
    );
    assert!(matches!(
        o.load_yaml_str("threads: [1, 2]\n"),
        Err(Error::Parse(_))
    ));
}

#[test]
fn from_bytes_profile_and_stats() {
    let bytes = std::fs::read(model_path("cnn")).unwrap();
    let mut opts = one_thread();
    opts.set_str("profile", "1").unwrap();
    let model = Model::from_bytes(&bytes, Some(&opts)).unwrap();
    let mut session = model.session(Some(&opts)).unwrap();
    assert!(session.profile().is_empty());
    let input = Tensor::load(data("cnn", "input_0.npy")).unwrap();
    let out = session.run(&[&input]).unwrap();
    assert_eq!(
        out[0].as_slice::<f32>().unwrap(),
        &c_api_run("cnn", &["input_0.npy"])[0][..]
    );
    let prof = session.profile();
    assert_eq!(prof.len(), unsafe {
        sys::mopt_session_profile_count(session.as_ptr())
    });
    assert!(!prof.is_empty() && !prof[0].op.is_empty() && !prof[0].kernel.is_empty());
    assert!(session.stat("last_run_ns").unwrap() > 0);
    assert!(matches!(
        Model::from_bytes(&bytes[..10], None),
        Err(Error::Parse(_))
    ));
}

/// One model shared by four threads, each with its own session; and a
/// session moved to another thread.
#[test]
fn model_is_shared_across_threads() {
    let opts = one_thread();
    let model = Model::load(model_path("cnn"), Some(&opts)).unwrap();
    let input = Tensor::load(data("cnn", "input_0.npy")).unwrap();
    let expect = c_api_run("cnn", &["input_0.npy"]).remove(0);
    let pixels: Vec<f32> = input.to_vec().unwrap();
    let results: Vec<Vec<f32>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (model, pixels) = (&model, &pixels);
                scope.spawn(move || {
                    let mut o = Options::new().unwrap();
                    o.set_int("threads", 1).unwrap();
                    let mut s = model.session(Some(&o)).unwrap();
                    let t = TensorRef::new(pixels, &[1, 3, 32, 32]).unwrap();
                    let mut last = Vec::new();
                    for _ in 0..3 {
                        last = s.run(&[&t]).unwrap()[0].to_vec::<f32>().unwrap();
                    }
                    last
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in results {
        assert_eq!(r, expect);
    }

    let mut session = model.session(Some(&opts)).unwrap();
    let moved_back = std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let out = session.run(&[&input as &dyn AsTensor]).unwrap();
                (session, out)
            })
            .join()
            .unwrap()
    });
    let (session, out) = moved_back;
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &expect[..]);
    assert_eq!(session.stat("runs").unwrap(), 1);
}

// Compile-time checks of the thread-safety markers. The negative ones use
// an ambiguity: `<T as AmbiguousIfSync<_>>::check` has one candidate impl
// when T is not Sync, two (a compile error) when it is.
trait AmbiguousIfSync<A> {
    fn check() {}
}
impl<T: ?Sized> AmbiguousIfSync<()> for T {}
impl<T: ?Sized + Sync> AmbiguousIfSync<u8> for T {}

#[test]
fn send_and_sync_follow_the_c_rules() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Model>();
    send::<mopt::Session<'static>>();
    send::<Options>();
    send::<Tensor>();
    send::<TensorRef<'static>>();
    send::<TensorMut<'static>>();
    <mopt::Session<'static> as AmbiguousIfSync<_>>::check();
    <Options as AmbiguousIfSync<_>>::check();
    <Tensor as AmbiguousIfSync<_>>::check();
    <TensorRef<'static> as AmbiguousIfSync<_>>::check();
    <TensorMut<'static> as AmbiguousIfSync<_>>::check();
}
