"""The commerce wording on top of VADER's lexicon: words, and phrases scored as one token.

Data only; ``sentiment.py`` uses it. Valences are on VADER's scale (-4 to +4).
"""

# Words ------------------------------------------------------------------------------------

COMMERCE_LEXICON = {
    # build and quality
    "sturdy": 1.8,
    "sturdier": 1.6,
    "durable": 1.9,
    "well-made": 2.0,
    "well-built": 2.0,
    "solid": 1.2,
    "reliable": 1.6,
    "unreliable": -1.8,
    "pristine": 1.8,
    "flimsy": -1.9,
    "flimsier": -1.9,
    "shoddy": -2.1,
    "cheaply": -1.4,
    "defective": -2.2,
    "faulty": -2.0,
    "malfunctioned": -2.0,
    "malfunctions": -1.8,
    "unusable": -2.3,
    "wobbly": -1.4,
    "rickety": -1.6,
    "leaks": -1.6,
    "leaking": -1.6,
    "leaky": -1.6,
    "cracked": -1.6,
    "cracks": -1.4,
    "chipped": -1.5,
    "chipping": -1.5,
    "dented": -1.5,
    "scratched": -1.4,
    "ripped": -1.5,
    "frayed": -1.3,
    "rusty": -1.6,
    "rusted": -1.6,
    "peeling": -1.3,
    "pilling": -1.2,
    "faded": -1.0,
    "stained": -1.4,
    "smelly": -1.6,
    "flaw": -1.2,
    "flaws": -1.2,
    "flawed": -1.5,
    "junk": -2.4,
    "garbage": -2.5,
    "trash": -2.2,
    "counterfeit": -2.3,
    "knockoff": -1.8,
    "knock-off": -1.8,
    "fake": -1.8,
    "mediocre": -1.2,
    "decent": 1.0,
    "comfy": 1.8,
    "absorbent": 1.3,
    "leakproof": 1.5,
    "cozy": 1.8,
    "cosy": 1.8,
    # value and service
    "overpriced": -1.9,
    "pricey": -0.8,
    "bargain": 1.6,
    "unhelpful": -1.8,
    "unresponsive": -1.8,
    "refund": -0.6,
    # lukewarm in a product review
    "ok": 0.5,
    "okay": 0.5,
    "fine": 0.6,
}

# Phrases become one token (a lexicon word) before scoring. Order matters: the first
# pattern that matches a stretch of text takes it ("didn't stop working" must become
# "didn't stopworking" before "didn't work" could take "didn't ... work").
PHRASES = (
    (
        (
            r"stop(?:s|ped|ping)? (?:working|charging|turning on)|quit working|"
            r"died after"
        ),
        "stopworking",
        -2.3,
    ),
    (
        r"works? (?:great|perfectly|well|like a charm|as expected|as advertised|as described)",
        "worksgreat",
        2.0,
    ),
    (r"fell apart|falls apart|falling apart|came apart|comes apart", "fellapart", -2.3),
    (
        r"(?:arrived|came|showed up|was delivered) "
        r"(?:broken|damaged|cracked|smashed|shattered|dented|crushed)",
        "arriveddamaged",
        -2.3,
    ),
    (
        (
            r"never (?:arrived|came|showed up|received it|got it)|"
            r"(?:didn't|did not) (?:arrive|receive it|get it)"
        ),
        "neverarrived",
        -2.5,
    ),
    (
        r"(?:arrived|came|delivered) "
        r"(?:early|quickly|promptly|on time|ahead of schedule|next day|the next day)",
        "arrivedontime",
        1.6,
    ),
    (
        (
            r"(?:arrived|came|was delivered) late|"
            r"(?:late|delayed) (?:delivery|shipment|shipping)"
        ),
        "arrivedlate",
        -1.7,
    ),
    (
        r"(?:fast|quick|speedy|prompt|rapid|super "
        r"fast|lightning fast) (?:shipping|delivery|dispatch|postage)",
        "fastshipping",
        2.0,
    ),
    (
        (
            r"(?:slow|terrible|awful) (?:shipping|delivery|dispatch|postage)|"
            r"(?:shipping|delivery) (?:was|is) (?:very |so |really )?slow|"
            r"took (?:forever|ages|weeks)"
        ),
        "slowshipping",
        -1.8,
    ),
    (
        (
            r"cheap plastic|cheaply made|feels cheap|looks cheap|cheap quality|"
            r"cheap material|cheap feeling"
        ),
        "cheapplastic",
        -2.0,
    ),
    (r"poorly made|badly made|poor build|poor craftsmanship", "poorlymade", -2.1),
    (
        (
            r"well (?:made|built|constructed|designed)|high quality|great quality|"
            r"excellent quality|good quality"
        ),
        "wellmade",
        2.1,
    ),
    (r"(?:well|nicely|carefully|securely) (?:packaged|packed|wrapped|boxed)", "wellpacked", 1.8),
    (r"(?:badly|poorly) (?:packaged|packed|wrapped)", "badlypacked", -1.8),
    (
        r"(?:exactly |just )?as (?:described|advertised|pictured|shown|expected|listed)",
        "asdescribed",
        1.6,
    ),
    (
        r"(?:looks |look |is |was )?nothing like (?:the |in the "
        r")?(?:picture|pictures|photo|photos|description|listing|image|images)",
        "nothinglikephoto",
        -2.2,
    ),
    (
        (
            r"true to size|fits? (?:perfectly|great|well|like a glove|nicely)|"
            r"perfect fit|great fit|good fit"
        ),
        "fitswell",
        2.0,
    ),
    (
        (
            r"runs? (?:small|large|big|narrow|tight)|"
            r"too (?:small|big|large|tight|short|long|loose|narrow|wide)"
        ),
        "toosmall",
        -1.5,
    ),
    (
        (
            r"(?:great|good|excellent|amazing|fantastic) value|"
            r"value for (?:the )?money|worth every (?:penny|cent)|"
            r"worth the (?:money|price)|bang for (?:the|your) buck"
        ),
        "goodvalue",
        2.1,
    ),
    (r"waste of (?:money|time)|rip-?off", "wasteofmoney", -2.6),
    (
        (
            r"(?:does|did)n't work|(?:does|did) not work|not working|"
            r"won't (?:turn on|charge|work)|doesn't turn on|dead on arrival"
        ),
        "doesnotwork",
        -2.3,
    ),
    (r"does the job|does what it says|serves its purpose", "doesthejob", 0.9),
    (r"holds up (?:well|great|nicely)|held up (?:well|great|nicely)", "holdsup", 1.7),
    (
        (
            r"(?:missing|no) (?:parts|pieces|screws|instructions|accessories)|"
            r"(?:parts|pieces) (?:were |are )?missing"
        ),
        "missingparts",
        -1.8,
    ),
    (r"wrong (?:item|size|colou?r|model|product)", "wrongitem", -1.8),
    (
        (
            r"(?:returning|returned|return|sending|sent|send) it back|"
            r"(?:returning|returned) it|had to return"
        ),
        "returnedit",
        -1.8,
    ),
    (
        (
            r"(?:chemical|strong|weird|bad|plastic) smell|"
            r"smells (?:like|of) (?:chemicals|plastic)"
        ),
        "badsmell",
        -1.5,
    ),
    (r"(?:1|one) star", "onestar", -2.2),
    (r"(?:5|five) stars", "fivestars", 2.2),
    (
        (
            r"(?:would|will) buy again|buy it again|(?:would|will) order again|"
            r"(?:would|will) purchase again"
        ),
        "buyagain",
        2.0,
    ),
)
