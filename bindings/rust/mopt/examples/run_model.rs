//! run_model — runs a model once with the mopt crate and prints its outputs.
//!
//!   cargo run --example run_model -- MODEL.onnx [INPUT.npy ...] [--expect OUTPUT.npy ...]
//!
//! Inputs are .npy files in model order; without any, each input is zeros
//! (symbolic dimensions set to 1). With --expect, every output is compared
//! with a reference .npy (max abs error <= 1e-4) and the exit status says
//! whether they all matched.
use std::process::exit;

use mopt::{DType, Dim, Model, Options, Tensor};

fn main() {
    if let Err(e) = run() {
        eprintln!("run_model: {}", e);
        exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args
        .iter()
        .position(|a| a == "--expect")
        .unwrap_or(args.len());
    let (positional, expect) = (&args[..split], args.get(split + 1..).unwrap_or(&[]));
    let path = positional
        .first()
        .ok_or("usage: run_model MODEL [INPUT.npy ...] [--expect OUTPUT.npy ...]")?;

    let mut opts = Options::new()?;
    opts.set_int("threads", 1)?;
    let model = Model::load(path, Some(&opts))?;
    let mut session = model.session(Some(&opts))?;
    println!("mopt {} — {}", mopt::version(), path);

    let inputs: Vec<Tensor> = if positional.len() > 1 {
        positional[1..]
            .iter()
            .map(Tensor::load)
            .collect::<Result<_, _>>()?
    } else {
        model
            .inputs()
            .iter()
            .map(|io| {
                let dims: Vec<i64> = io
                    .dims
                    .clone()
                    .unwrap_or_default()
                    .iter()
                    .map(|d| match d {
                        Dim::Fixed(n) => *n,
                        Dim::Symbolic(_) => 1,
                    })
                    .collect();
                Tensor::zeros(io.dtype.unwrap_or(DType::F32), &dims)
            })
            .collect::<Result<_, _>>()?
    };
    for (io, t) in model.inputs().iter().zip(&inputs) {
        println!("input  {:<20} {:?} {:?}", io.name, t.dtype(), t.dims());
    }

    let refs: Vec<&dyn mopt::AsTensor> = inputs.iter().map(|t| t as &dyn mopt::AsTensor).collect();
    let outputs = session.run(&refs)?;
    let mut failed = false;
    for (i, (io, t)) in model.outputs().iter().zip(&outputs).enumerate() {
        print!("output {:<20} {:?} {:?}", io.name, t.dtype(), t.dims());
        if let Ok(v) = t.as_slice::<f32>() {
            print!(" first {:?}", &v[..v.len().min(4)]);
        }
        if let Some(reference) = expect.get(i) {
            let want = Tensor::load(reference)?;
            let (got, want) = (t.as_slice::<f32>()?, want.as_slice::<f32>()?);
            let err = if got.len() == want.len() {
                got.iter()
                    .zip(want)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max)
            } else {
                f32::INFINITY
            };
            print!(" max abs error {:.3e}", err);
            failed |= !(err <= 1e-4);
        }
        println!();
    }
    if failed {
        return Err("outputs differ from the reference".into());
    }
    Ok(())
}
