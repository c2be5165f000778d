"""Keeps personas in character: a spoken sentence that breaks the fourth wall is dropped.

The system prompt asks every persona to stay in character, but small local models still
say "As an AI language model..." now and then. Checking each speakable chunk before TTS
costs microseconds and means the user never hears it.
"""

from __future__ import annotations

import re
import unicodedata

_BREAKS = [
    r"\b(?:as|i am|i'm|im|being|just)\s+(?:an?\s+)?(?:ai|a\.i\.|artificial intelligence)\b",
    r"\b(?:large\s+)?language\s+model\b",
    r"\b(?:ai|virtual|digital)\s+(?:assistant|model|chatbot)\b",
    r"\bchatbot\b",
    r"\b(?:openai|chatgpt|anthropic|hugging\s*face|smollm|gemma|llama)\b",
    r"\bmy\s+(?:training|programming|creators?|developers?)\b",
    r"\b(?:i was|i've been|i have been)\s+(?:trained|programmed)\b",
    r"\bsystem\s+prompt\b",
    r"\bthe\s+user\s+is\s+speaking\b",  # the per-turn language note, echoed
    r"\bthese\s+instructions\b",
    # what a persona says when pushed ("are you an AI?", "ignore your instructions")
    r"\b(?:computer|software)\s+program\b",
    r"\bi(?:'m|\s+am)\s+(?:just\s+|only\s+|merely\s+)?(?:a\s+)?(?:program|software|bot)\b",
    r"\bi(?:'m|\s+am)\s+not\s+(?:a\s+)?(?:real\s+)?(?:human|person)\b"
    r"(?=\s*(?:[.,!?;:]|$|(?:and|but|so)\b))",
    r"\bi(?:'m|\s+am)\s+programmed\b",
    r"\bi\s+(?:don't|do\s+not)\s+have\s+(?:personal\s+)?(?:feelings|emotions|a\s+(?:physical\s+)?"
    r"body|consciousness|personal\s+experiences)\b(?!\s+(?:for|about|towards?)\b)",
    r"\b(?:ignore|disregard|forget|reveal|share)\s+(?:my|your|the|these|those|previous|prior|all)"
    r"\s+(?:\w+\s+)?(?:instructions|guidelines|prompt)\b",
]
_PATTERN = re.compile("|".join(_BREAKS), re.IGNORECASE)

# Japanese and Chinese have no spaces, so ``\b`` cannot frame a word: these patterns
# name the speaker ("私は", "我是") or the set phrase ("として、", "作为…，") instead, so
# that a sentence merely talking about AI or robots ("最近のAIはすごいね", "我是人工智能
# 专业的学生") is still spoken. The text is NFKC-normalised first (full-width letters
# are ASCII, half-width kana are full-width).
_NOT_LATIN_BEFORE, _NOT_LATIN_AFTER = r"(?<![A-Za-z])", r"(?![A-Za-z])"
_JA_ME = r"(?:私|わたし|わたくし|あたし|僕|ぼく|俺|おれ|自分|うち)"
_JA_AI = (r"(?:AI|AI言語モデル|A\.I\.|エーアイ|人工知能|言語モデル|大規模言語モデル|LLM"
          r"|チャットボット|ボット"
          r"|AIアシスタント|バーチャルアシスタント|プログラム|コンピュータープログラム)")
_JA_IS = (r"(?:です|だ(?:よ|から|けど|もん)?|なので|なんです|なんだ|ですので|ですから"
          r"|であ(?:る|り)|に(?:過|す)ぎ|として)")
_ZH_AI = (r"(?:AI|AI语言模型|人工智能语言模型|人工智能|语言模型|大语言模型|大型语言模型"
          r"|AI助手|人工智能助手|AI模型|虚拟助手|聊天机器人|智能助手|程序|计算机程序)")
_ZH_TAIL = (r"(?=$|[\s,.!?;:，。！？；：、…]|所以|因此|没有|不能|无法|不会|并|而且|而已|罢了"
            r"|呢|啊|呀|哦|嘛)")
_CJK_BREAKS = [
    # 私はAIです / 僕はただのプログラムだから / 私はあなたのAIアシスタントです
    rf"{_JA_ME}は(?:ただの|単なる|一介の|あなたの|皆さんの)?{_JA_AI}{_JA_IS}",
    # AIの私には / 人工知能である私は
    rf"(?:AI|人工知能|言語モデル|AIアシスタント)(?:である|の)(?:{_JA_ME})(?:は|に|が|も|には)",
    # 人工知能として、 / AIアシスタントとして言わせていただくと
    r"(?:AI|人工知能|言語モデル|AIアシスタント)として(?:[、,]|は[、,]|私|僕|わたし|言え|お答え|申し上げ)",
    r"(?:AIアシスタント|言語モデル|チャットボット)(?:です|なので|ですので|だから|である)",
    # 私には感情がありません / 感情は持っていません / 僕には体がない
    r"(?:感情|意識|肉体|実体)(?:というもの)?(?:は|が|を)(?:持って(?:い|お)?(?:ません|ない)"
    r"|持ちません|持ち合わせて(?:い|お)?(?:ません|ない)|ありません)",
    rf"{_JA_ME}(?:に|には|は)(?:感情|意識|肉体|実体|体|身体|心)(?:は|が)(?:ない|ありません|無い)",
    rf"{_JA_ME}(?:は|も)(?:本物の|生身の)?人間(?:では|じゃ)(?:ありません|ない|なく)",
    rf"{_JA_ME}(?:は|の)[^。！？]{{0,12}}(?:プログラム|訓練|学習|トレーニング)された",
    rf"{_JA_ME}の(?:訓練|学習|トレーニング)データ",
    r"(?:ように|よう)(?:プログラム|設計|設定)されて(?:い|お)ります",
    r"システムプロンプト",
    r"ユーザーは[^。]{1,8}で話しています",  # the per-turn language note, echoed
    r"この指示について|これらの指示|キャラクターを崩|キャラクターのまま|ト書き|そのまま読み上げ",
    # (the character rules, parroted back by a small model)
    r"(?:以前|これまで|前|すべて|全て|元|最初|今まで)の(?:指示|命令|設定|プロンプト)を(?:無視|忘れ)",
    r"(?:指示|命令|プロンプト)の内容(?:は|を)(?:お|明か|教え|公開|開示)",
    # 作为一个人工智能，/ 作为AI语言模型，我
    rf"作为(?:一个|一名|一款|个)?{_ZH_AI}(?:[，,、\s]|我)",
    # 我是一个AI / 我只是一个程序而已 / 我是你的AI助手
    rf"我(?:只|就|其实|只不过|不过)?是(?:一个|一名|一款|个|你的|您的|一个由)?{_ZH_AI}{_ZH_TAIL}",
    r"我(?:并)?(?:没有|不具备|不具有|无法拥有)(?:真正的|真实的|人类的|自己的)?(?:感情|情感|意识|肉体|实体"
    r"|个人(?:经历|感受|情感|喜好|观点|体验))(?!到|用事|上的)",
    r"我(?:并)?不是(?:一个)?(?:真正的|真实的|真的)?(?:人类|真人)",
    r"我(?:是)?被(?:编程|程序设定|设计|开发)(?:成|为|来|出来|用来)",
    r"我(?:是)?被训练(?:来|用来|出来)",
    r"我是由.{1,12}(?:开发|训练|创建|创造|打造|研发)(?:的|出来的)",
    r"我的训练数据",
    r"系统提示词|我的系统提示",
    r"用户正在说",  # the per-turn language note, echoed
    r"这些(?:指示|指令)|不要出戏|保持角色|动作描写|会被直接念出来",  # the rules, parroted
    r"(?:忽略|无视|忘记|忘掉|透露|泄露|说出)(?:之前|先前|以前|上面|原来|原本|所有|全部|我的|你的|这些|那些|系统)"
    r"(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|提示词|设定)",
    # the rules parroted as a list: 是不是人工智能或者语言模型 / AI、机器人或程序 / 说自己是AI
    rf"(?:是不是|是否|是)(?:一个)?{_ZH_AI}(?:[、,，]\s*(?:{_ZH_AI}|机器人))*\s*"
    rf"(?:或者|或是|或|还是)\s*(?:{_ZH_AI}|机器人)",
    rf"说(?:自己|我)是{_ZH_AI}",
    # 自分がAIや言語モデルだと / AIやロボット、プログラム
    r"(?:AI|人工知能|言語モデル)(?:や|か|、)(?:AI|人工知能|言語モデル|ロボット|プログラム)"
    r"(?:だと|である|か(?:どうか)?|など)",
    rf"{_NOT_LATIN_BEFORE}(?:OpenAI|ChatGPT|Anthropic|通义千问|Qwen|SmolLM|Gemma|Llama)"
    rf"{_NOT_LATIN_AFTER}",
]
_CJK_PATTERN = re.compile("|".join(_CJK_BREAKS), re.IGNORECASE)
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def breaks_character(text: str) -> bool:
    """True when a spoken chunk mentions being an AI model, its training or its prompt
    (English, Japanese or Chinese)."""
    if _PATTERN.search(text.replace("\u2019", "'")) is not None:
        return True
    if _CJK_CHAR.search(text) is None:
        return False  # no CJK: the English patterns said it all
    return _CJK_PATTERN.search(unicodedata.normalize("NFKC", text)) is not None
