"""Host event names tagged by what they do (model.host.event_tag, event_tags): TensorFlow's batch preparation and
tf.function calls."""

from tb_gpu_advisor.model.host import event_tag, event_tags


def test_tensorflow_file_ops_conversions_and_function_runs():
    assert event_tag("EagerLocalExecute: ReadFile") == "tf_prep:ReadFile"
    assert event_tag("input/DecodePng:DecodePng") == "tf_prep:DecodePng"
    assert event_tag("convert_to_tensor") == "tf_prep:convert_to_tensor"
    assert event_tag("EagerLocalExecute: __inference_train_step_41") == "tf_function"
    assert event_tag("DecodeImageV2Op::JPEG") is None  # the kernel inside the op event: counted once, by the op
    assert event_tag("EagerLocalExecute: MatMul") is None


def test_the_python_call_of_a_tf_function_is_its_call_unless_named_like_the_step_marker():
    names = {
        1: "EagerLocalExecute: __inference_train_step_41",
        2: "train_step",
        3: "train",
        4: "__inference_train_7",
        5: "other",
    }
    assert event_tags(names) == {1: "tf_function", 2: "tf_function", 4: "tf_function"}
